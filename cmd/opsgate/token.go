package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
)

const tokenHelp = `Usage:
  opsgate token create --person NAME
  opsgate token list
  opsgate token revoke ID

token manages the bearer tokens of the HTTP API (/api/v1 on server.listen).
A token acts as the identity api:NAME, so the policy file's people and
roles decide what it may approve, as for that person's clicks in chat
(map it with people: NAME: {api: NAME}).

create prints the new token alone on stdout, once: only its SHA-256 is
stored, so it cannot be shown again. list prints each token's id, person,
creation and revocation, never the token. revoke ends a token at once,
also for a serve already running. All three work whether serve runs or not.
`

func (e *env) token(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	person := fs.String("person", "", "create: the person the token acts for")
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
		secret, t, err := httpapi.NewToken(*person, time.Now())
		if err == nil {
			err = ts.CreateToken(ctx, t)
		}
		if err != nil {
			e.fail(err)
			return exitError
		}
		fmt.Fprintln(e.stdout, secret)
		fmt.Fprintf(e.stderr, "opsgate: token %s created for api:%s; it is shown only this once\n", t.ID, t.Person)
		e.warnUnmapped(cfg, t.Person)
	case "list":
		list, err := ts.Tokens(ctx)
		if err != nil {
			e.fail(err)
			return exitError
		}
		w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tPERSON\tCREATED\tREVOKED")
		for _, t := range list {
			revoked := "-"
			if !t.RevokedAt.IsZero() {
				revoked = t.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.ID, t.Person, t.CreatedAt.Format(time.RFC3339), revoked)
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
