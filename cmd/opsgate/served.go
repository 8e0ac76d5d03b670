package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/memory"
)

// startedSchedules names the schedules serve runs; they count as
// something to serve.
func startedSchedules(cfg *config.Config) []string {
	var names []string
	for _, s := range cfg.Schedules {
		names = append(names, s.Name)
	}
	return names
}

// nothingToServe is the one rule serve and doctor share: a server with no
// chat adapter, no schedule and no API token answers nobody, which must
// not pass for a healthy deployment. The HTTP API (always on
// server.listen) counts once it has an unrevoked token (apiTokens): an
// API-and-console deployment needs no chat platform (docs/design.md §16). empty
// is false when there is something to serve.
func nothingToServe(cfg *config.Config, apiTokens int) (what, fix string, empty bool) {
	if len(cfg.Adapters()) > 0 || len(startedSchedules(cfg)) > 0 || apiTokens > 0 || cfg.Incidents.On() {
		return "", "", false
	}
	what = "nothing to serve: no chat adapter is enabled, no schedule runs and the HTTP API has no token"
	fix = "set telegram.token, slack.bot_token or discord.token, add a schedule, " +
		"or create an API token (opsgate token create --person NAME) for the HTTP API and console; " +
		"--allow-empty starts anyway with only /healthz, /readyz and /metrics to answer, for a standby or a /healthz-only check"
	return what, fix, true
}

// apiTokensAtStart counts the unrevoked API tokens serve starts with,
// for nothingToServe. A SQLite file that does not exist yet has none and
// is not created for the question.
func apiTokensAtStart(ctx context.Context, cfg *config.Config) (int, error) {
	if loc := storeLocation(cfg); loc.Kind == memory.SQLite {
		if _, err := os.Stat(loc.Target); errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer store.Close()
	ts, ok := store.(httpapi.TokenStore)
	if !ok {
		return 0, nil
	}
	list, err := ts.Tokens(ctx)
	if err != nil {
		return 0, fmt.Errorf("listing the API tokens: %w", err)
	}
	return activeTokens(list, time.Now()), nil
}

// activeTokens counts the tokens neither revoked nor expired at now.
func activeTokens(list []core.APIToken, now time.Time) int {
	n := 0
	for _, t := range list {
		if t.RevokedAt.IsZero() && !t.Expired(now) {
			n++
		}
	}
	return n
}
