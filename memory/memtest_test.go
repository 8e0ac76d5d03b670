package memory_test

import (
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/internal/bothstores"
)

// The black-box tests of the memory tools, commands, import and export
// run on both stores (TestMain, in main_test.go, starts PostgreSQL).

// clock is the tests' time.
var clock = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// onStores runs f on a fresh SQLite and a fresh PostgreSQL store.
func onStores(t *testing.T, f func(t *testing.T, s docs.Store)) { bothstores.Each(t, f) }

// onSQLite is a fresh SQLite store.
func onSQLite(t *testing.T) docs.Store { return bothstores.SQLite(t) }

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

// saveDoc saves d at clock, as bothstores.Save does.
func saveDoc(t testing.TB, s docs.Store, d docs.Document) docs.Document {
	t.Helper()
	return bothstores.Save(t, s, d, docs.Save{At: clock, Note: "created"})
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
