package memory

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/memory/docs"
)

// readQueries reads a labelled query file of testdata.
func readQueries(t testing.TB, name string) []LabelledQuery {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := ReadQueries(f)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// TestRetrievalQuality measures retrieval over the labelled corpus
// (testdata/corpus, testdata/queries.yaml) on SQLite, and logs the
// figures, overall and per kind of query:
//
//	go test ./memory -run RetrievalQuality -v
//
// It fails when fewer than 90% of the questions find one of their
// relevant documents in the first three (hit@3), or when the share of all
// relevant documents found in the first three (recall@3) falls below
// 0.85, where ranking stands at the time of writing: many questions list
// two or three relevant documents, and some of the second ones (a service
// context, a related incident) share few words with the question. The
// same is measured on Postgres, and logged.
func TestRetrievalQuality(t *testing.T) {
	eachStore(t, func(t *testing.T, s docs.Store) {
		m := newMemory(t, s)
		importDir(t, m, filepath.Join("testdata", "corpus"))
		q, err := Evaluate(t.Context(), m, readQueries(t, "queries.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("all    %v", q.Figures)
		kinds := make([]string, 0, len(q.ByKind))
		for k := range q.ByKind {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		for _, k := range kinds {
			t.Logf("%-6s %v", k, q.ByKind[k])
		}
		for _, miss := range q.Misses {
			t.Logf("miss (%s, recall %.2f, first relevant at %d) %q\n\twant %v\n\tgot  %v",
				miss.Query.Kind, miss.Recall, miss.Rank, miss.Query.Text, miss.Query.Relevant, miss.Returned)
		}
		if strings.HasSuffix(t.Name(), "/postgres") {
			return // measured and logged, not tuned for
		}
		if q.HitAt3 < 0.9 {
			t.Errorf("hit@3 = %.3f, want ≥ 0.9", q.HitAt3)
		}
		if q.RecallAt3 < 0.85 {
			t.Errorf("recall@3 = %.3f, want ≥ 0.85", q.RecallAt3)
		}
	})
}
