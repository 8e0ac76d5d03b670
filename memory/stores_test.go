package memory

import (
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/internal/bothstores"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// testNow is the tests' clock: documents saved without a time are saved
// at it, and ranking ages documents from it.
var testNow = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// eachStore runs f on a fresh SQLite and a fresh PostgreSQL store.
func eachStore(t *testing.T, f func(t *testing.T, s docs.Store)) { bothstores.Each(t, f) }

func openSQLite(t testing.TB) *sqlite.Store { return bothstores.SQLite(t) }

// newMemory is a Memory over s at testNow, logging to t.
func newMemory(t testing.TB, s docs.Store) *Memory {
	return New(s, Options{Logger: coretest.Logger(t), Now: func() time.Time { return testNow }})
}

// put saves d at time at (testNow when zero), as bothstores.Save does.
func put(t testing.TB, s docs.Store, d docs.Document, at time.Time) docs.Document {
	t.Helper()
	if at.IsZero() {
		at = testNow
	}
	return bothstores.Save(t, s, d, docs.Save{At: at})
}

// importDir imports every Markdown file under dir, failing t on any
// skipped file.
func importDir(t testing.TB, m *Memory, dir string) {
	t.Helper()
	r, err := m.Import(t.Context(), dir, "test")
	if err != nil {
		t.Fatalf("Import %s: %v", dir, err)
	}
	if len(r.Skipped) > 0 || len(r.Refused) > 0 {
		t.Fatalf("Import %s skipped %v, refused %v", dir, r.Skipped, r.Refused)
	}
}
