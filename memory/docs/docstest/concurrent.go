package docstest

import (
	"errors"
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// testConcurrentCreates: saves of different documents from many
// goroutines all succeed, and saves at one path from many goroutines make
// one document with a version for each.
func testConcurrentCreates(t *testing.T, s docs.Store) {
	const n = 8
	errs := make([]error, n)
	ids := make([]string, n)
	concurrently(n, func(i int) {
		d, err := s.SaveDocument(t.Context(), plain(ws, "p"+string(rune('a'+i))+".md", "content"), docs.Save{At: at(0)})
		ids[i], errs[i] = d.ID, err
	})
	seen := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Errorf("SaveDocument #%d: %v", i, err)
		}
		if seen[ids[i]] {
			t.Errorf("SaveDocument #%d got the id %s of another", i, ids[i])
		}
		seen[ids[i]] = true
	}
	if ds, err := s.Documents(t.Context(), docs.Filter{}); err != nil || len(ds) != n {
		t.Errorf("Documents = %d documents, %v; want %d", len(ds), err, n)
	}

	const m = 4
	concurrently(m, func(i int) {
		_, errs[i] = s.SaveDocument(t.Context(), plain(ops, "same.md", "version from writer "+string(rune('a'+i))), docs.Save{At: at(time.Duration(i))})
	})
	for i := range m {
		if errs[i] != nil {
			t.Errorf("SaveDocument at one path #%d: %v", i, errs[i])
		}
	}
	d, err := s.DocumentAt(t.Context(), ops, "same.md")
	if err != nil {
		t.Fatalf("DocumentAt: %v", err)
	}
	if d.Version != m || len(history(t, s, d.ID)) != m {
		t.Errorf("after %d concurrent saves at one path: version %d, %d in history; want %d and %d", m, d.Version, len(history(t, s, d.ID)), m, m)
	}
}

// testConcurrentExpectSHA: of two saves expecting the same version, one
// wins and the other gets a conflict carrying the winner's version.
func testConcurrentExpectSHA(t *testing.T, s docs.Store) {
	d := save(t, s, plain(ws, "race.md", "round 0"), docs.Save{At: at(0)})
	for round := 1; round <= 5; round++ {
		var got [2]docs.Document
		var errs [2]error
		concurrently(2, func(i int) {
			c := d
			c.Content = "round " + string(rune('0'+round)) + " by writer " + string(rune('a'+i))
			got[i], errs[i] = s.SaveDocument(t.Context(), c, docs.Save{ExpectSHA: d.SHA256, At: at(time.Duration(round) * time.Minute)})
		})
		wins := 0
		var winner docs.Document
		for i, err := range errs {
			if err == nil {
				wins++
				winner = got[i]
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d saves won (errors %v), want exactly 1", round, wins, errs)
		}
		for _, err := range errs {
			if err == nil {
				continue
			}
			var ce *docs.ConflictError
			if !errors.As(err, &ce) {
				t.Errorf("round %d: the losing save: err = %v, want a *docs.ConflictError", round, err)
				continue
			}
			diff(t, "the loser's ConflictError.Current", winner, ce.Current)
		}
		if winner.Version != d.Version+1 {
			t.Errorf("round %d: winner at version %d, want %d", round, winner.Version, d.Version+1)
		}
		diff(t, "the document after the race", winner, get(t, s, d.ID))
		d = winner
	}
	if n := len(history(t, s, d.ID)); n != 6 {
		t.Errorf("History has %d versions after 5 races, want 6", n)
	}
}
