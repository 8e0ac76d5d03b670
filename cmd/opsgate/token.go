package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/internal/apitokens"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
)

func (e *env) token(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	var f apitokens.Flags
	f.Register(fs)
	rest, code, ok := e.parseArgs(fs, args, apitokens.Help, 2)
	if !ok {
		return code
	}
	req, err := f.Request(rest)
	if err != nil {
		return e.io().Usage(err, apitokens.Help)
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return e.fail(err)
	}
	defer store.Close()
	ts, ok := store.(httpapi.TokenStore)
	if !ok {
		return e.fail(errors.New("token: this store keeps no API tokens"))
	}
	c := apitokens.Command{IO: e.io(), Store: ts, Unmapped: func(person string) { e.warnUnmapped(cfg, person) }}
	return c.Run(ctx, req)
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
