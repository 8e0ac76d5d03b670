package terminal

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/cli"
)

// ApprovalsHelp is opsgate approvals' help.
const ApprovalsHelp = `Usage:
  opsgate approvals show ID [--json]

approvals show prints one approval request of store.url: the tool, its
arguments, who asked and who decided, and its preview (docs/design.md §18)
with the whole diff, where a chat card shows the first 20 lines. Secrets
in it are redacted. --json prints the request as one JSON object.
`

// ApprovalID is the ID of opsgate approvals show ID, from the command's
// arguments; the error is a usage error (cli.IO.Usage).
func ApprovalID(args []string) (string, error) {
	if len(args) == 0 || args[0] != "show" {
		return "", cli.ErrNoSubcommand
	}
	if len(args) != 2 {
		return "", fmt.Errorf("approvals show: want one approval id, got %q", args[1:])
	}
	return args[1], nil
}

// ShowApproval prints a as opsgate approvals show does: WriteApproval, or
// with asJSON one indented JSON object.
func ShowApproval(w io.Writer, a core.Approval, asJSON bool) error {
	if !asJSON {
		return WriteApproval(w, a)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}
