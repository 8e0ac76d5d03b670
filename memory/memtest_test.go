package memory_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// The black-box tests of the memory tools, commands, import and export
// run on both stores (TestMain, in main_test.go, starts PostgreSQL).

// clock is the tests' time.
var clock = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// onStores runs f as the subtests "sqlite" and "postgres" (skipped without
// a server), each on a fresh store.
func onStores(t *testing.T, f func(t *testing.T, s docs.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, onSQLite(t)) })
	t.Run("postgres", func(t *testing.T) {
		s, err := postgres.Open(t.Context(), pgtest.DB(t))
		if err != nil {
			t.Fatalf("postgres.Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		f(t, s)
	})
}

// onSQLite is a fresh SQLite store.
func onSQLite(t *testing.T) docs.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "opsgate.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mem is a Memory over s at clock, logging to t.
func mem(t testing.TB, s docs.Store) *memory.Memory {
	return memory.New(s, memory.Options{Logger: coretest.Logger(t), Now: func() time.Time { return clock }})
}

// all lists every document of s, archived ones included.
func all(t testing.TB, s docs.Store) []docs.Document {
	t.Helper()
	ds, err := s.Documents(t.Context(), docs.Filter{})
	if err != nil {
		t.Fatalf("Documents: %v", err)
	}
	return ds
}

// saveDoc saves d, defaulting to an active admin_approved workspace
// runbook.
func saveDoc(t testing.TB, s docs.Store, d docs.Document) docs.Document {
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
	got, err := s.SaveDocument(t.Context(), d, docs.Save{At: clock, Note: "created"})
	if err != nil {
		t.Fatalf("SaveDocument %s: %v", d.Path, err)
	}
	return got
}

// history is document id's versions.
func history(t testing.TB, s docs.Store, id string) []docs.Version {
	t.Helper()
	vs, err := s.History(t.Context(), id)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	return vs
}
