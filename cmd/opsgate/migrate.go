package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/opsgate/opsgate/memory/sqlite"
)

func (e *env) migrate(ctx context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("migrate", flag.ContinueOnError), args, "Usage: opsgate migrate\n\nApply pending database migrations to store.url and print the schema version.\n"); !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelInfo)
	if !ok {
		return exitError
	}
	path, err := cfg.Store.SQLitePath()
	if err != nil {
		e.fail(err)
		return exitError
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	// Open applies pending migrations; Migrate then confirms nothing is left.
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		e.fail(err)
		return exitError
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		e.fail(err)
		return exitError
	}
	v, err := store.SchemaVersion(ctx)
	if err != nil {
		e.fail(err)
		return exitError
	}
	state := "up to date"
	if created {
		state = "created"
	}
	fmt.Fprintf(e.stdout, "store: sqlite %s (%s), schema version %d\n", path, state, v)
	return exitOK
}
