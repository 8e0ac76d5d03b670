package main

import (
	"context"
	"log/slog"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/policy/redact"
)

// What the commands need of a store beyond core.Store; both stores have
// them, a store in a test may not.
type (
	// pendingCounter counts the approvals waiting, for the metrics.
	pendingCounter interface {
		PendingSummary(ctx context.Context) (core.PendingSummary, error)
	}
	// coordinated stores let replicas share conversations (docs/design.md §12).
	coordinated interface {
		Coordinator(replica string, log *slog.Logger) (core.Coordinator, func())
	}
	// alive is a coordinator that tells whether this replica can show it
	// is alive (docs/design.md §16).
	alive interface {
		Alive() (ok bool, detail string)
	}
)

// openStore opens (creating and migrating) the store named by store.url.
func openStore(ctx context.Context, cfg *config.Config) (core.Store, error) {
	return memory.Open(ctx, cfg.Store.URL)
}

// storeLocation is store.url parsed (config.Load validated it).
func storeLocation(cfg *config.Config) memory.Location {
	loc, _ := memory.Parse(cfg.Store.URL)
	return loc
}

// openRedacted loads the configuration and opens its redactor and store,
// for the commands that show what the store holds; on failure it has
// printed why and ok is false. The caller closes the store.
func (e *env) openRedacted(ctx context.Context) (cfg *config.Config, red *redact.Redactor, store core.Store, ok bool) {
	if cfg, ok = e.setup(slog.LevelWarn); !ok {
		return nil, nil, nil, false
	}
	var err error
	if red, err = newRedactor(cfg); err == nil {
		store, err = openStore(ctx, cfg)
	}
	if err != nil {
		e.fail(err)
		return nil, nil, nil, false
	}
	return cfg, red, store, true
}
