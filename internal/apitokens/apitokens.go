// Package apitokens is the body of opsgate token: create, list and revoke
// the bearer tokens of the HTTP API (adapters/httpapi keeps their types and
// checks them on each request). It works on any store that keeps tokens,
// whether serve runs or not; cmd/opsgate parses the flags and opens the
// store (docs/design.md §1). Not internal/tokens: that one counts the
// model's tokens.
package apitokens

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/cli"
	"github.com/opsgate/opsgate/policy"
)

// Help is opsgate token's help.
const Help = `Usage:
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

// args is how many arguments each subcommand takes.
var args = map[string]int{"create": 0, "list": 0, "revoke": 1}

// Flags are opsgate token's flags.
type Flags struct {
	Person, Scope, Expires string
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Person, "person", "", "create: the person the token acts for; list: only this person's tokens")
	fs.StringVar(&f.Scope, "scope", strings.Join(httpapi.DefaultScopes, ","), "create: what the token may do, comma-separated")
	fs.StringVar(&f.Expires, "expires", "90d", "create: a duration (36h), days (90d) or never")
}

// Request is one opsgate token command, checked.
type Request struct {
	Sub      string // create, list or revoke
	ID       string // revoke's
	Person   string
	Scopes   []string
	Lifetime time.Duration
	Expires  bool // false: never
}

// Request checks the subcommand and its arguments (rest) with the flags;
// the error is a usage error naming the command (cli.IO.Usage).
func (f Flags) Request(rest []string) (Request, error) {
	if len(rest) == 0 {
		return Request{}, cli.ErrNoSubcommand
	}
	n, known := args[rest[0]]
	switch {
	case !known:
		return Request{}, fmt.Errorf("token: unknown subcommand %q", rest[0])
	case len(rest)-1 != n:
		return Request{}, fmt.Errorf("token %s: want %d argument(s), got %q", rest[0], n, rest[1:])
	case rest[0] == "create" && !httpapi.ValidName(f.Person):
		return Request{}, fmt.Errorf("token create: --person NAME is required (letters, digits, . _ -), got %q", f.Person)
	}
	r := Request{Sub: rest[0], Person: f.Person}
	if n == 1 {
		r.ID = rest[1]
	}
	var err error
	if r.Scopes, err = httpapi.ParseScopes(f.Scope); err != nil {
		return Request{}, fmt.Errorf("token create: --scope: %v", err)
	}
	if r.Lifetime, r.Expires, err = httpapi.ParseExpiry(f.Expires); err != nil {
		return Request{}, fmt.Errorf("token create: --expires: %v", err)
	}
	return r, nil
}

// Run runs r.
func (c Command) Run(ctx context.Context, r Request) int {
	switch r.Sub {
	case "create":
		return c.Create(ctx, r.Person, r.Scopes, r.Lifetime, r.Expires)
	case "list":
		return c.List(ctx, r.Person)
	}
	return c.Revoke(ctx, r.ID)
}

// Command runs opsgate token's subcommands over a store of tokens.
type Command struct {
	cli.IO
	Store httpapi.TokenStore
	// Unmapped, when set, warns that the policy gives person's tokens no
	// role; create calls it for the new token's person.
	Unmapped func(person string)
}

// Create creates a token for person and prints it, once. expires false:
// it never expires.
func (c Command) Create(ctx context.Context, person string, scopes []string, lifetime time.Duration, expires bool) int {
	now := time.Now()
	secret, t, err := httpapi.NewToken(person, now)
	t.Scopes, t.ExpiresAt = scopes, time.Time{}
	if expires {
		t.ExpiresAt = now.UTC().Add(lifetime)
	}
	if err == nil {
		err = c.Store.CreateToken(ctx, t)
	}
	if err != nil {
		return c.Fail(err)
	}
	fmt.Fprintln(c.Stdout, secret)
	fmt.Fprintf(c.Stderr, "opsgate: token %s created for api:%s (scopes %s, %s); it is shown only this once\n",
		t.ID, t.Person, strings.Join(t.Scopes, ","), ExpiryText(t, now))
	if c.Unmapped != nil {
		c.Unmapped(t.Person)
	}
	if slices.Contains(t.Scopes, httpapi.ScopeAdmin) {
		fmt.Fprintf(c.Stderr, "opsgate: note: the admin scope lets this token see every conversation (terminal ones too), the whole audit log and every token, whatever the policy says of api:%s\n", t.Person)
	}
	return cli.ExitOK
}

// List prints the tokens (person's only, when not empty), never a secret.
func (c Command) List(ctx context.Context, person string) int {
	list, err := c.Store.Tokens(ctx)
	if err != nil {
		return c.Fail(err)
	}
	now := time.Now()
	w := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPERSON\tSCOPES\tCREATED\tEXPIRES\tLAST USED\tREVOKED")
	for _, t := range list {
		if person != "" && t.Person != person {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Person, strings.Join(t.Scopes, ","), t.CreatedAt.Format(time.RFC3339),
			ExpiryText(t, now), timeOr(t.LastUsedAt, "never"), timeOr(t.RevokedAt, "-"))
	}
	w.Flush()
	return cli.ExitOK
}

// Revoke ends token id at once.
func (c Command) Revoke(ctx context.Context, id string) int {
	if err := c.Store.RevokeToken(ctx, id, time.Now()); err != nil {
		if errors.Is(err, core.ErrNotFound) {
			err = fmt.Errorf("token revoke: no token %q (opsgate token list)", id)
		}
		return c.Fail(err)
	}
	fmt.Fprintf(c.Stdout, "revoked %s\n", id)
	return cli.ExitOK
}

// ExpiryText is a token's expiry as list shows it: "never", the time, or
// "expired <time>".
func ExpiryText(t core.APIToken, now time.Time) string {
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

// Active counts the tokens neither revoked nor expired at now.
func Active(list []core.APIToken, now time.Time) int {
	n := 0
	for _, t := range list {
		if t.RevokedAt.IsZero() && !t.Expired(now) {
			n++
		}
	}
	return n
}

// Unmapped reports whether pol maps no person to api:<person>: a token of
// that person then acts as a person of its own, with no role, and every
// decision it sends is refused.
func Unmapped(pol *policy.Policy, person string) bool {
	id := "api:" + person
	return pol.Person(id) == id
}

// UnmappedText is the warning for a token whose person the policy file
// maps to no one.
func UnmappedText(policyFile, person string) string {
	return fmt.Sprintf("%s maps no person to api:%s, so this token has no role; add it under people, e.g. %s: {api: %s}",
		policyFile, person, person, person)
}
