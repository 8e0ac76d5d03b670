package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/internal/apitokens"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
)

func (e *env) token(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	person := fs.String("person", "", "create: the person the token acts for; list: only this person's tokens")
	scopeFlag := fs.String("scope", strings.Join(httpapi.DefaultScopes, ","), "create: what the token may do, comma-separated")
	expiresFlag := fs.String("expires", "90d", "create: a duration (36h), days (90d) or never")
	rest, code, ok := e.parseArgs(fs, args, apitokens.Help, 2)
	if !ok {
		return code
	}
	if len(rest) == 0 {
		fmt.Fprint(e.stderr, apitokens.Help)
		return exitUsage
	}
	n, known := apitokens.Args[rest[0]]
	switch {
	case !known:
		fmt.Fprintf(e.stderr, "opsgate token: unknown subcommand %q\n\n%s", rest[0], apitokens.Help)
		return exitUsage
	case len(rest)-1 != n:
		fmt.Fprintf(e.stderr, "opsgate token %s: want %d argument(s), got %q\n\n%s", rest[0], n, rest[1:], apitokens.Help)
		return exitUsage
	case rest[0] == "create" && !httpapi.ValidName(*person):
		fmt.Fprintf(e.stderr, "opsgate token create: --person NAME is required (letters, digits, . _ -), got %q\n\n%s", *person, apitokens.Help)
		return exitUsage
	}
	scopes, err := httpapi.ParseScopes(*scopeFlag)
	if err != nil {
		fmt.Fprintf(e.stderr, "opsgate token create: --scope: %v\n\n%s", err, apitokens.Help)
		return exitUsage
	}
	lifetime, expires, err := httpapi.ParseExpiry(*expiresFlag)
	if err != nil {
		fmt.Fprintf(e.stderr, "opsgate token create: --expires: %v\n\n%s", err, apitokens.Help)
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
	c := apitokens.Command{IO: e.io(), Store: ts, Unmapped: func(person string) { e.warnUnmapped(cfg, person) }}
	switch rest[0] {
	case "create":
		return c.Create(ctx, *person, scopes, lifetime, expires)
	case "list":
		return c.List(ctx, *person)
	}
	return c.Revoke(ctx, rest[1])
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
	if apitokens.Unmapped(pol, person) {
		fmt.Fprintf(e.stderr, "opsgate: warning: %s\n", apitokens.UnmappedText(cfg.Policy.File, person))
	}
}
