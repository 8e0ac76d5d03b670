package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

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
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	red, err := newRedactor(cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	defer store.Close()
	a, err := store.Approval(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		fmt.Fprintf(e.stderr, "opsgate approvals show: no approval %q in %s\n", id, cfg.Store.URL)
		return exitError
	}
	if err != nil {
		e.fail(err)
		return exitError
	}
	a = red.Approval(a)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(a); err != nil {
			e.fail(err)
			return exitError
		}
		return exitOK
	}
	if err := writeApproval(e.stdout, a); err != nil {
		e.fail(err)
		return exitError
	}
	return exitOK
}

// writeApproval prints a for a person: every line sanitised, the whole
// preview diff.
func writeApproval(w io.Writer, a core.Approval) error {
	var b strings.Builder
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%-12s %s\n", label+":", terminal.Sanitize(value))
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
	fmt.Fprintf(&b, "arguments:\n  %s\n", terminal.Sanitize(args.String()))
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
				b.WriteString("    " + terminal.Sanitize(l) + "\n")
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
