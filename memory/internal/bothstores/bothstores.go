// Package bothstores opens fresh memory document stores for tests: a
// SQLite file and a throw-away PostgreSQL database (internal/pgtest), so
// that every memory test runs on both stores the same way.
package bothstores

import (
	"path/filepath"
	"testing"

	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// Each runs f as the subtests "sqlite" and "postgres", each on a fresh
// store. The test binary's TestMain must be pgtest.Main.
func Each(t *testing.T, f func(t *testing.T, s docs.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, Postgres(t)) })
}

// SQLite is a fresh SQLite store in a temporary directory.
func SQLite(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "opsgate.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Postgres is a fresh PostgreSQL store in a database of its own.
func Postgres(t testing.TB) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), pgtest.DB(t))
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Save saves d with opt, as an active admin_approved workspace runbook
// titled by its path unless d says otherwise, failing t on an error.
func Save(t testing.TB, s docs.Store, d docs.Document, opt docs.Save) docs.Document {
	t.Helper()
	if d.Scope == (docs.Scope{}) {
		d.Scope = docs.WorkspaceScope
	}
	if d.Type == "" {
		d.Type = docs.Runbook
	}
	if d.Status == "" {
		d.Status = docs.Active
	}
	if d.Trust == "" {
		d.Trust = docs.AdminApproved
	}
	if d.Title == "" {
		d.Title = d.Path
	}
	got, err := s.SaveDocument(t.Context(), d, opt)
	if err != nil {
		t.Fatalf("SaveDocument %s: %v", d.Path, err)
	}
	return got
}
