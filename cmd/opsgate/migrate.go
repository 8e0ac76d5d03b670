package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/opsgate/opsgate/memory"
)

const migrateHelp = `Usage: opsgate migrate

Apply pending database migrations to store.url, check that the schema is
the one the migrations make (a dropped audit table or append-only trigger
is an error), and print the schema version and the migrations applied.
`

func (e *env) migrate(ctx context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("migrate", flag.ContinueOnError), args, migrateHelp); !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelInfo)
	if !ok {
		return exitError
	}
	if err := memory.Migrate(ctx, e.stdout, cfg.Store.URL); err != nil {
		return e.fail(err)
	}
	return exitOK
}
