package terminal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// WriteApproval prints a for a person, as opsgate approvals show does:
// every line sanitised, the arguments indented, the whole preview diff
// (docs/design.md §18), where a chat card shows its first lines.
func WriteApproval(w io.Writer, a core.Approval) error {
	var b strings.Builder
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%-12s %s\n", label+":", Sanitize(value))
		}
	}
	line("approval", a.ID)
	tool := a.Tool
	if a.Toolset != "" {
		tool += " on " + a.Toolset
	}
	line("tool", tool)
	line("risk", string(a.Risk))
	line("status", string(a.Status))
	line("conversation", a.ConvKey)
	line("requested by", a.Requester.String())
	line("created", stamp(a.CreatedAt))
	line("expires", stamp(a.ExpiresAt))
	if a.Status != core.ApprovalPending {
		line("decided by", a.DecidedBy.String())
		line("decided", stamp(a.DecidedAt))
		line("reason", a.Reason)
	}
	line("action hash", a.ActionHash)
	var args bytes.Buffer
	if json.Indent(&args, a.Arguments, "  ", "  ") != nil {
		args.Reset()
		args.Write(a.Arguments)
	}
	fmt.Fprintf(&b, "arguments:\n  %s\n", Sanitize(args.String()))
	if p := a.Preview; p != nil {
		b.WriteString("preview:\n")
		line("  status", string(p.Status))
		line("  changed", p.Changed)
		line("  stale", p.Stale)
		line("  summary", p.Summary)
		line("  hash", p.Hash)
		for _, part := range []struct{ label, text string }{{"why", p.Why}, {"diff", p.Diff}} {
			if part.text == "" {
				continue
			}
			fmt.Fprintf(&b, "  %s:\n", part.label)
			for _, l := range strings.Split(strings.TrimRight(part.text, "\n"), "\n") {
				b.WriteString("    " + Sanitize(l) + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateTime + " MST")
}
