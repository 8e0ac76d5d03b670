package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
)

const tokenHelp = `Usage:
  opsgate token create --person NAME [--scope S,...] [--expires 90d|never]
  opsgate token list [--person NAME]
  opsgate token revoke ID

token manages the bearer tokens of the HTTP API (/api/v1 on server.listen).
A token acts as the identity api:NAME, so the policy file's people and
roles decide what it may see and approve, as for that person's clicks in
chat (map it with people: NAME: {api: NAME}).

--scope is what the token may do (default read,write,approve):
  read     the conversations the person may see, their events and audit
           entries, pending approvals, schedules, memory search
  write    post messages, stop runs
  approve  decide approvals (the policy still decides who may)
  hook     only POST /hooks/...; nothing under /api/v1
  admin    every conversation, the whole audit, every token (includes read)
--expires is a Go duration (2s, 36h), a number of days (90d, the default)
or never. An expired token is refused with 401 token_expired.

create prints the new token alone on stdout, once: only its SHA-256 is
stored, so it cannot be shown again. list prints each token's id, person,
scopes, expiry, last use and revocation, never the token; --person shows
one person's tokens (the API's GET /api/v1/tokens shows a person their
own, an admin all). revoke ends a token at once, also for a serve already
running. All three work whether serve runs or not.
`

func (e *env) token(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	person := fs.String("person", "", "create: the person the token acts for; list: only this person's tokens")
	scopeFlag := fs.String("scope", strings.Join(httpapi.DefaultScopes, ","), "create: what the token may do, comma-separated")
	expiresFlag := fs.String("expires", "90d", "create: a duration (36h), days (90d) or never")
	rest, code, ok := e.parseArgs(fs, args, tokenHelp, 2)
	if !ok {
		return code
	}
	want := map[string]int{"create": 0, "list": 0, "revoke": 1}
	if len(rest) == 0 {
		fmt.Fprint(e.stderr, tokenHelp)
		return exitUsage
	}
	n, known := want[rest[0]]
	switch {
	case !known:
		fmt.Fprintf(e.stderr, "opsgate token: unknown subcommand %q\n\n%s", rest[0], tokenHelp)
		return exitUsage
	case len(rest)-1 != n:
		fmt.Fprintf(e.stderr, "opsgate token %s: want %d argument(s), got %q\n\n%s", rest[0], n, rest[1:], tokenHelp)
		return exitUsage
	case rest[0] == "create" && !httpapi.ValidName(*person):
		fmt.Fprintf(e.stderr, "opsgate token create: --person NAME is required (letters, digits, . _ -), got %q\n\n%s", *person, tokenHelp)
		return exitUsage
	}
	scopes, err := httpapi.ParseScopes(*scopeFlag)
	if err != nil {
		fmt.Fprintf(e.stderr, "opsgate token create: --scope: %v\n\n%s", err, tokenHelp)
		return exitUsage
	}
	lifetime, expires, err := httpapi.ParseExpiry(*expiresFlag)
	if err != nil {
		fmt.Fprintf(e.stderr, "opsgate token create: --expires: %v\n\n%s", err, tokenHelp)
		return exitUsage
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	defer store.Close()
	ts, ok := store.(httpapi.TokenStore)
	if !ok {
		e.fail(errors.New("token: this store keeps no API tokens"))
		return exitError
	}
	switch rest[0] {
	case "create":
		now := time.Now()
		secret, t, err := httpapi.NewToken(*person, now)
		t.Scopes, t.ExpiresAt = scopes, time.Time{}
		if expires {
			t.ExpiresAt = now.UTC().Add(lifetime)
		}
		if err == nil {
			err = ts.CreateToken(ctx, t)
		}
		if err != nil {
			e.fail(err)
			return exitError
		}
		fmt.Fprintln(e.stdout, secret)
		fmt.Fprintf(e.stderr, "opsgate: token %s created for api:%s (scopes %s, %s); it is shown only this once\n",
			t.ID, t.Person, strings.Join(t.Scopes, ","), expiryText(t, now))
		e.warnUnmapped(cfg, t.Person)
		if slices.Contains(t.Scopes, httpapi.ScopeAdmin) {
			fmt.Fprintf(e.stderr, "opsgate: note: the admin scope lets this token see every conversation (terminal ones too), the whole audit log and every token, whatever the policy says of api:%s\n", t.Person)
		}
	case "list":
		list, err := ts.Tokens(ctx)
		if err != nil {
			e.fail(err)
			return exitError
		}
		now := time.Now()
		w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tPERSON\tSCOPES\tCREATED\tEXPIRES\tLAST USED\tREVOKED")
		for _, t := range list {
			if *person != "" && t.Person != *person {
				continue
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Person, strings.Join(t.Scopes, ","), t.CreatedAt.Format(time.RFC3339),
				expiryText(t, now), timeOr(t.LastUsedAt, "never"), timeOr(t.RevokedAt, "-"))
		}
		w.Flush()
	case "revoke":
		if err := ts.RevokeToken(ctx, rest[1], time.Now()); err != nil {
			if errors.Is(err, core.ErrNotFound) {
				err = fmt.Errorf("token revoke: no token %q (opsgate token list)", rest[1])
			}
			e.fail(err)
			return exitError
		}
		fmt.Fprintf(e.stdout, "revoked %s\n", rest[1])
	}
	return exitOK
}

// expiryText is a token's expiry as list shows it: "never", the time, or
// "expired <time>".
func expiryText(t core.APIToken, now time.Time) string {
	switch {
	case t.ExpiresAt.IsZero():
		return "never"
	case t.Expired(now):
		return "expired " + t.ExpiresAt.Format(time.RFC3339)
	}
	return t.ExpiresAt.Format(time.RFC3339)
}

func timeOr(t time.Time, none string) string {
	if t.IsZero() {
		return none
	}
	return t.Format(time.RFC3339)
}

// warnUnmapped warns when the policy file maps no person to api:<person>.
func (e *env) warnUnmapped(cfg *config.Config, person string) {
	if cfg.Policy.File == "" {
		return
	}
	pol, err := policy.Load(cfg.Policy.File, policyOptions(cfg))
	if err != nil {
		fmt.Fprintf(e.stderr, "opsgate: warning: the policy file could not be read to check api:%s: %v\n", person, err)
		return
	}
	if unmapped(pol, person) {
		fmt.Fprintf(e.stderr, "opsgate: warning: %s\n", unmappedText(cfg, person))
	}
}

// unmapped reports whether pol maps no person to api:<person>: a token of
// that person then acts as a person of its own, with no role, and every
// decision it sends is refused.
func unmapped(pol *policy.Policy, person string) bool {
	id := "api:" + person
	return pol.Person(id) == id
}

func unmappedText(cfg *config.Config, person string) string {
	return fmt.Sprintf("%s maps no person to api:%s, so this token has no role; add it under people, e.g. %s: {api: %s}",
		cfg.Policy.File, person, person, person)
}
