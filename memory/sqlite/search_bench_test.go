package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/docs/docstest"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// BenchmarkSearchDocuments is memory retrieval's full-text search at 10,000
// and 100,000 documents of generated operations text, with queries of 3, 10
// and 25 terms drawn as the documents' words are (so most queries hold
// words that a good part of the documents have). Besides ns/op it reports
// the 50th and 99th percentile of one search in milliseconds (the target
// is p99 ≤ 20 ms at 100,000 documents), the process's CPU time per search
// (what a busy machine stretches the wall-clock figures from), and the
// matches returned. Seeding 100,000 documents takes about a minute.
//
//	go test ./memory/sqlite -run '^$' -bench SearchDocuments -benchtime 2000x
func BenchmarkSearchDocuments(b *testing.B) {
	docstest.BenchSearchSizes(b, seedDocuments, processCPU)
}

// seedDocuments opens a store holding n generated documents, created in
// one transaction.
func seedDocuments(b *testing.B, n int) *sqlite.Store {
	b.Helper()
	start := time.Now()
	s := open(b, filepath.Join(b.TempDir(), "opsgate.db"))
	g := docstest.NewCorpus(1)
	ds := make([]docs.Document, n)
	for i := range ds {
		ds[i] = g.Document(i)
	}
	// The first alone prepares the writer's statements for the rest.
	if _, err := s.SaveDocument(b.Context(), ds[0], docs.Save{}); err != nil {
		b.Fatal(err)
	}
	if err := s.CreateDocumentsInOneTx(b.Context(), ds[1:], "seeded"); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d documents in %v", n, time.Since(start).Round(time.Millisecond))
	return s
}
