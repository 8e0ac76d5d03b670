package docstest

import (
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// testUsages: usage records are appended and read per document, newest
// first, at most limit.
func testUsages(t *testing.T, s docs.Store) {
	ctx := t.Context()
	a := save(t, s, doc(ws, "a.md", "a"), docs.Save{At: at(0)})
	b := save(t, s, doc(ws, "b.md", "b"), docs.Save{At: at(0)})
	u := func(id, run string, d time.Duration, score float64) docs.Usage {
		return docs.Usage{DocID: id, ConvKey: "slack:T1:C1:1.2", RunID: run, Score: score, At: at(d)}
	}
	if err := s.RecordUsage(ctx, nil); err != nil {
		t.Fatalf("RecordUsage(nil): %v", err)
	}
	if err := s.RecordUsage(ctx, []docs.Usage{u(a.ID, "r1", 0, 0.91), u(b.ID, "r1", 0, 0.5)}); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	if err := s.RecordUsage(ctx, []docs.Usage{u(a.ID, "r3", 2*time.Minute, 0.25)}); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	// Recorded later, but of an earlier run.
	if err := s.RecordUsage(ctx, []docs.Usage{u(a.ID, "r2", time.Minute, 0.75)}); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	usages := func(id string, limit int) []docs.Usage {
		t.Helper()
		us, err := s.Usages(ctx, id, limit)
		if err != nil {
			t.Fatalf("Usages(%s, %d): %v", id, limit, err)
		}
		return us
	}
	all := []docs.Usage{u(a.ID, "r3", 2*time.Minute, 0.25), u(a.ID, "r2", time.Minute, 0.75), u(a.ID, "r1", 0, 0.91)}
	diff(t, "Usages(a, 0)", all, usages(a.ID, 0))
	diff(t, "Usages(a, 2)", all[:2], usages(a.ID, 2))
	diff(t, "Usages(a, 10)", all, usages(a.ID, 10))
	diff(t, "Usages(b, 0)", []docs.Usage{u(b.ID, "r1", 0, 0.5)}, usages(b.ID, 0))
	c := save(t, s, doc(ws, "c.md", "c"), docs.Save{At: at(0)})
	diff(t, "Usages of an unused document", []docs.Usage(nil), usages(c.ID, 0))
}
