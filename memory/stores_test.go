package memory

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// testNow is the tests' clock: documents saved without a time are saved
// at it, and ranking ages documents from it.
var testNow = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// eachStore runs f as the subtests "sqlite" (a temporary file) and
// "postgres" (a throw-away database, skipped without a server), each on a
// fresh store.
func eachStore(t *testing.T, f func(t *testing.T, s docs.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, openSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, openPostgres(t)) })
}

// memoryStore is the store as docs.Store, skipping t when it is not one.
func memoryStore(t testing.TB, s any) docs.Store {
	t.Helper()
	ds, ok := s.(docs.Store)
	if !ok {
		t.Skipf("%T does not keep memory documents", s)
	}
	return ds
}

func openSQLite(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t testing.TB) docs.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), pgtest.DB(t))
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return memoryStore(t, s)
}

// newMemory is a Memory over s at testNow, logging to t.
func newMemory(t testing.TB, s docs.Store) *Memory {
	return New(s, Options{Logger: coretest.Logger(t), Now: func() time.Time { return testNow }})
}

// put saves d at time at (testNow when zero), as an active admin_approved
// workspace runbook unless d says otherwise.
func put(t testing.TB, s docs.Store, d docs.Document, at time.Time) docs.Document {
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
	if at.IsZero() {
		at = testNow
	}
	got, err := s.SaveDocument(t.Context(), d, docs.Save{At: at})
	if err != nil {
		t.Fatalf("SaveDocument %s: %v", d.Path, err)
	}
	return got
}

// importDir imports every Markdown file under dir, failing t on any
// skipped file.
func importDir(t testing.TB, m *Memory, dir string) {
	t.Helper()
	r, err := m.Import(t.Context(), dir, "test")
	if err != nil {
		t.Fatalf("Import %s: %v", dir, err)
	}
	if len(r.Skipped) > 0 {
		t.Fatalf("Import %s skipped %v", dir, r.Skipped)
	}
}
