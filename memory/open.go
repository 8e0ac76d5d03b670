// Package memory is opsgate's long-term memory: runbooks, notes and
// postmortems kept as documents (the type in memory/docs), their import
// and safety scan, retrieval and ranking, and the memory_* tools and
// commands (docs/design.md §14).
//
// Its two sub-packages are something larger, the stores of all durable
// state: memory/sqlite for one process and memory/postgres for several
// replicas keep conversations, runs, approvals, the audit chain, events,
// incidents and these documents (docs/design.md §12). Open is the one
// place that chooses between them for a store.url.
package memory

import (
	"context"
	"fmt"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/storeurl"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// Store kinds (storeurl's, named here for memory's callers).
const (
	SQLite   = storeurl.SQLite
	Postgres = storeurl.Postgres
)

// Location is a parsed store.url (storeurl.Location).
type Location = storeurl.Location

// Parse reads a store.url (storeurl.Parse): sqlite://PATH or a bare PATH,
// or postgres://user:pass@host:5432/db?sslmode=… (postgresql:// too).
func Parse(raw string) (Location, error) { return storeurl.Parse(raw) }

// Open opens, migrating it when needed, the store that raw names. A store
// whose audit log lost its append-only protection is refused with a
// *core.SchemaError.
func Open(ctx context.Context, raw string) (core.Store, error) {
	loc, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("store.url: %w", err)
	}
	if loc.Kind == Postgres {
		return postgres.Open(ctx, loc.Target)
	}
	return sqlite.Open(ctx, loc.Target)
}

// OpenForInspection opens the store like Open, but returns a schema
// changed outside opsgate as schemaErr rather than refusing the store, so
// that `opsgate audit verify` can say which entry was changed.
func OpenForInspection(ctx context.Context, raw string) (s core.Store, schemaErr error, err error) {
	loc, err := Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("store.url: %w", err)
	}
	if loc.Kind == Postgres {
		return postgres.OpenForInspection(ctx, loc.Target)
	}
	return sqlite.OpenForInspection(ctx, loc.Target)
}
