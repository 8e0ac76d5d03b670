// Package audit is the body of opsgate audit: the audit log printed for a
// person (redacted, sanitised, as a table or JSON Lines) and audit verify,
// which reads core's verdict on the hash chain (core.VerifyAudit) and says
// what it means. cmd/opsgate parses the flags and opens the store
// (docs/design.md §1).
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/cli"
	"github.com/opsgate/opsgate/policy/redact"
)

// Help is opsgate audit's help.
const Help = `Usage:
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

// Print prints the entries of log that f selects, oldest first, secrets
// hidden by red: a table, or with asJSON one JSON object per line.
func Print(ctx context.Context, c cli.IO, log core.AuditLog, red *redact.Redactor, f core.AuditFilter, asJSON bool) int {
	entries, err := log.Audit(ctx, f)
	if err != nil {
		return c.Fail(err)
	}
	for i := range entries {
		redactEntry(red, &entries[i])
	}
	if asJSON {
		enc := json.NewEncoder(c.Stdout)
		enc.SetEscapeHTML(false)
		for _, en := range entries {
			if err := enc.Encode(en); err != nil {
				return c.Fail(err)
			}
		}
		return cli.ExitOK
	}
	w := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTIME (UTC)\tKIND\tACTOR\tTOOL\tCONVERSATION\tDETAIL")
	for _, en := range entries {
		tool := en.Tool
		if en.Toolset != "" {
			tool = en.Toolset + "/" + en.Tool
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", en.ID, en.Time.UTC().Format(time.DateTime), en.Kind,
			orDash(en.Actor.ID), orDash(tool), orDash(en.ConvKey), orDash(oneLine(terminal.Sanitize(en.Detail))))
	}
	if err := w.Flush(); err != nil {
		return c.Fail(err)
	}
	return cli.ExitOK
}

// Verify checks the hash chain of log and prints the verdict. schemaErr
// is what opening the store found wrong with its protection (a dropped
// append-only trigger), or nil: both findings are reported, as a store
// left unprotected may hold an edit already.
func Verify(ctx context.Context, c cli.IO, log core.AuditLog, schemaErr error) int {
	chain, err := core.VerifyAudit(ctx, log)
	if err != nil {
		return c.Fail(err)
	}
	if schemaErr != nil {
		fmt.Fprintf(c.Stderr, "opsgate: audit verify: %v\n", schemaErr)
	}
	switch {
	case chain.Break != nil:
		fmt.Fprintf(c.Stderr, "opsgate: audit verify: %s\n", chain)
		return cli.ExitError
	case schemaErr != nil:
		fmt.Fprintf(c.Stderr, "opsgate: audit verify: the chain itself holds: %s; nothing stops an edit from now on\n", chain)
		return cli.ExitError
	}
	fmt.Fprintf(c.Stdout, "ok: %s\n", chain)
	return cli.ExitOK
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
