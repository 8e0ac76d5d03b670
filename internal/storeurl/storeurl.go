// Package storeurl reads a store.url without linking a database driver, so
// that what only validates a store.url (internal/config) does not carry pgx
// and SQLite along. memory.Open is the one place that opens what it names.
package storeurl

import (
	"fmt"
	"net/url"
	"strings"
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
