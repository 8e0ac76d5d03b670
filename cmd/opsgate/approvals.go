package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
)

const approvalsHelp = `Usage:
  opsgate approvals show ID [--json]

approvals show prints one approval request of store.url: the tool, its
arguments, who asked and who decided, and its preview (docs/design.md §18)
with the whole diff, where a chat card shows the first 20 lines. Secrets
in it are redacted. --json prints the request as one JSON object.
`

func (e *env) approvals(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("approvals", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "show: print the request as JSON")
	rest, code, ok := e.parseArgs(fs, args, approvalsHelp, 2)
	if !ok {
		return code
	}
	if len(rest) == 0 || rest[0] != "show" {
		fmt.Fprint(e.stderr, approvalsHelp)
		return exitUsage
	}
	if len(rest) != 2 {
		fmt.Fprintf(e.stderr, "opsgate approvals show: want one approval id, got %q\n\n%s", rest[1:], approvalsHelp)
		return exitUsage
	}
	id := rest[1]
	cfg, red, store, ok := e.openRedacted(ctx)
	if !ok {
		return exitError
	}
	defer store.Close()
	a, err := store.Approval(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		fmt.Fprintf(e.stderr, "opsgate approvals show: no approval %q in %s\n", id, cfg.Store.URL)
		return exitError
	}
	if err != nil {
		return e.fail(err)
	}
	a = red.Approval(a)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(a); err != nil {
			return e.fail(err)
		}
		return exitOK
	}
	if err := terminal.WriteApproval(e.stdout, a); err != nil {
		return e.fail(err)
	}
	return exitOK
}
