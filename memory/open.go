// Package memory is where opsgate keeps what it must not forget. Open is
// the one place that chooses the store for a store.url: memory/sqlite for
// one process, memory/postgres for several replicas (docs/design.md §12).
package memory

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// Store kinds.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Location is a parsed store.url.
type Location struct {
	Kind string // SQLite or Postgres
	// Target is the database file for SQLite, the connection URL for
	// Postgres.
	Target string
}

// String names the kind and the location, e.g. "sqlite ./opsgate.db".
func (l Location) String() string { return l.Kind + " " + l.Where() }

// Where names the location for people: the file, or the URL without its
// password.
func (l Location) Where() string {
	if l.Kind == Postgres {
		if u, err := url.Parse(l.Target); err == nil {
			return u.Redacted()
		}
		return "(unparseable URL)"
	}
	return l.Target
}

// Parse reads a store.url: sqlite://PATH or a bare PATH, or
// postgres://user:pass@host:5432/db?sslmode=… (postgresql:// too).
func Parse(raw string) (Location, error) {
	u := strings.TrimSpace(raw)
	if u == "" {
		return Location{}, fmt.Errorf("must not be empty (use sqlite://PATH or postgres://…)")
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return Location{Kind: SQLite, Target: u}, nil // a bare path
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
		if rest == "" {
			return Location{}, fmt.Errorf("sqlite:// needs a file path, e.g. sqlite://./opsgate-data/opsgate.db")
		}
		return Location{Kind: SQLite, Target: rest}, nil
	case "postgres", "postgresql":
		p, err := url.Parse(u)
		if err != nil {
			return Location{}, fmt.Errorf("not a valid postgres URL: %v", redactedErr(err))
		}
		if p.Host == "" {
			return Location{}, fmt.Errorf("postgres URL needs a host, e.g. postgres://opsgate@db:5432/opsgate")
		}
		return Location{Kind: Postgres, Target: u}, nil
	default:
		return Location{}, fmt.Errorf("unsupported scheme %q (use sqlite://PATH or postgres://…)", scheme)
	}
}

// redactedErr keeps a URL's password out of a parse error.
func redactedErr(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

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
