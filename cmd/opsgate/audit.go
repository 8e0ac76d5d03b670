package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/opsgate/opsgate/internal/audit"
	"github.com/opsgate/opsgate/memory"
)

func (e *env) audit(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "verify" {
		return e.auditVerify(ctx, args[1:])
	}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	var f audit.Flags
	f.Register(fs)
	if code, ok := e.parse(fs, args, audit.Help); !ok {
		return code
	}
	if err := f.Check(); err != nil {
		fmt.Fprintf(e.stderr, "opsgate %v\n", err)
		return exitUsage
	}
	_, red, store, ok := e.openRedacted(ctx)
	if !ok {
		return exitError
	}
	defer store.Close()
	return audit.Print(ctx, e.io(), store, red, f.Filter(time.Now()), f.JSON)
}

func (e *env) auditVerify(ctx context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("audit verify", flag.ContinueOnError), args, audit.Help); !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	// A store whose append-only triggers were dropped is still read: the
	// point is to say which entry was changed.
	store, schemaErr, err := memory.OpenForInspection(ctx, cfg.Store.URL)
	if err != nil {
		return e.fail(err)
	}
	defer store.Close()
	return audit.Verify(ctx, e.io(), store, schemaErr)
}
