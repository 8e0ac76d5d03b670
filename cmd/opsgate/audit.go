package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/policy/redact"
)

const auditHelp = `Usage:
  opsgate audit [--since DURATION] [--conversation KEY] [--json]
  opsgate audit verify

audit prints the audit log of store.url, oldest first: what was proposed,
who decided, what ran. Secrets in it (tokens, keys, passwords in details)
are redacted. --since 24h keeps the last 24 hours; --conversation keeps
one conversation; --json prints one JSON object per line (for a log
pipeline: ship it off this host).

audit verify checks the audit hash chain: each entry carries the SHA-256
of the one before it, so an entry edited, deleted or reordered with the
database's own tools breaks it. It prints how many entries verified and
exits 0, or names the first entry that does not verify and exits 1. A
dropped or disabled append-only trigger is reported too (exit 1), with
what the chain says.
`

func (e *env) audit(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "verify" {
		return e.auditVerify(ctx, args[1:])
	}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	since := fs.Duration("since", 0, "only entries of the last DURATION")
	convKey := fs.String("conversation", "", "only this conversation")
	asJSON := fs.Bool("json", false, "one JSON object per line")
	if code, ok := e.parse(fs, args, auditHelp); !ok {
		return code
	}
	if *since < 0 {
		fmt.Fprintf(e.stderr, "opsgate audit: --since: want a positive duration such as 24h (got %s)\n", *since)
		return exitUsage
	}
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
	f := core.AuditFilter{ConvKey: *convKey}
	if *since > 0 {
		f.Since = time.Now().Add(-*since)
	}
	entries, err := store.Audit(ctx, f)
	if err != nil {
		e.fail(err)
		return exitError
	}
	for i := range entries {
		redactEntry(red, &entries[i])
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		for _, en := range entries {
			if err := enc.Encode(en); err != nil {
				e.fail(err)
				return exitError
			}
		}
		return exitOK
	}
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTIME (UTC)\tKIND\tACTOR\tTOOL\tCONVERSATION\tDETAIL")
	for _, en := range entries {
		tool := en.Tool
		if en.Toolset != "" {
			tool = en.Toolset + "/" + en.Tool
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", en.ID, en.Time.UTC().Format(time.DateTime), en.Kind,
			orDash(en.Actor.ID), orDash(tool), orDash(en.ConvKey), orDash(oneLine(terminal.Sanitize(en.Detail))))
	}
	return flushOK(e, w)
}

func (e *env) auditVerify(ctx context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("audit verify", flag.ContinueOnError), args, auditHelp); !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	// A store whose append-only triggers were dropped is still read: the
	// point is to say which entry was changed.
	store, schemaErr, err := memory.OpenForInspection(ctx, cfg.Store.URL)
	if err != nil {
		e.fail(err)
		return exitError
	}
	defer store.Close()
	chain, err := core.VerifyAudit(ctx, store)
	if err != nil {
		e.fail(err)
		return exitError
	}
	// Both findings: a store left unprotected may hold an edit already.
	if schemaErr != nil {
		fmt.Fprintf(e.stderr, "opsgate: audit verify: %v\n", schemaErr)
	}
	switch {
	case chain.Break != nil:
		fmt.Fprintf(e.stderr, "opsgate: audit verify: %s\n", chain)
		return exitError
	case schemaErr != nil:
		fmt.Fprintf(e.stderr, "opsgate: audit verify: the chain itself holds: %s; nothing stops an edit from now on\n", chain)
		return exitError
	}
	fmt.Fprintf(e.stdout, "ok: %s\n", chain)
	return exitOK
}

// redactEntry hides secrets in the free-text fields of an audit entry. The
// stored entry stays as it is: its hash is over what was written.
func redactEntry(r *redact.Redactor, en *core.AuditEntry) {
	en.Detail = r.String(en.Detail)
	en.Actor.Name = r.String(en.Actor.Name)
	en.ConvKey = r.String(en.ConvKey)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return core.Truncate(s, 120, core.Runes)
}

func flushOK(e *env, w *tabwriter.Writer) int {
	if err := w.Flush(); err != nil {
		e.fail(err)
		return exitError
	}
	return exitOK
}
