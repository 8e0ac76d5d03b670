package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

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
	loc := storeLocation(cfg)
	created := false
	if loc.Kind == memory.SQLite {
		_, statErr := os.Stat(loc.Target)
		created = errors.Is(statErr, fs.ErrNotExist)
	}
	// Open applies pending migrations and checks the schema; Migrate then
	// confirms nothing is left.
	store, err := openStore(ctx, cfg)
	if err != nil {
		e.fail(err)
		return exitError
	}
	defer store.Close()
	m, ok := store.(migrator)
	if !ok {
		fmt.Fprintf(e.stdout, "store: %s (no migrations)\n", loc)
		return exitOK
	}
	var applied []string
	if o, ok := store.(interface{ AppliedOnOpen() []string }); ok {
		applied = o.AppliedOnOpen()
	}
	more, err := m.Migrate(ctx)
	if err != nil {
		e.fail(err)
		return exitError
	}
	applied = append(applied, more...)
	v, err := m.SchemaVersion(ctx)
	if err != nil {
		e.fail(err)
		return exitError
	}
	state := "up to date"
	if len(applied) > 0 {
		state = fmt.Sprintf("%d migrations applied", len(applied))
	}
	if created {
		state = "created, " + state
	}
	fmt.Fprintf(e.stdout, "store: %s (%s), schema version %d\n", loc, state, v)
	for _, name := range applied {
		fmt.Fprintf(e.stdout, "  applied %s\n", name)
	}
	return exitOK
}
