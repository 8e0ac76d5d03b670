package sqlite_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// saveAll saves ds in order, a second apart, and fails the test on error.
func saveAll(t *testing.T, s *sqlite.Store, ds []docs.Document) {
	t.Helper()
	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	for i, d := range ds {
		if _, err := s.SaveDocument(t.Context(), d, docs.Save{At: at.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
}

func searchDoc(scope docs.Scope, path, content string) docs.Document {
	return docs.Document{Scope: scope, Path: path, Content: content, Type: docs.Runbook, Status: docs.Active, Trust: docs.AdminApproved}
}

// paths returns the paths of ms in order.
func paths(ms []docs.Match) []string {
	var ps []string
	for _, m := range ms {
		ps = append(ps, m.Doc.Path)
	}
	return ps
}

// The best matches of all are in a scope the query does not see: the
// search ranks again with the filter rather than return too few.
func TestSearchRanksInScopeWhenTheBestMatchesAreElsewhere(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "opsgate.db"))
	bob := docs.Scope{Kind: docs.User, Key: "bob"}
	var ds []docs.Document
	for i := range 30 {
		d := searchDoc(bob, fmt.Sprintf("bob/%02d.md", i), "etcd etcd etcd")
		d.Title = "etcd"
		ds = append(ds, d)
	}
	filler := strings.Repeat("quorum lost after the disk failed on the node. ", 20)
	for i := range 3 {
		ds = append(ds, searchDoc(docs.WorkspaceScope, fmt.Sprintf("ws/%d.md", i), "etcd "+filler))
	}
	saveAll(t, s, ds)
	ms, err := s.SearchDocuments(t.Context(), docs.Query{Terms: []string{"etcd"}, Scopes: []docs.Scope{docs.WorkspaceScope}, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("SearchDocuments = %q, want 2 workspace documents", paths(ms))
	}
	for _, m := range ms {
		if m.Doc.Scope != docs.WorkspaceScope || !(m.Text > 0) {
			t.Errorf("match %s in %s with Text %v, want the workspace's with Text > 0", m.Doc.Path, m.Doc.Scope, m.Text)
		}
	}
}

// Over more documents than the budgets, the search ranks by its rarest
// words (see searchplan.go): here the budgets are shrunk so that 20
// documents are many.
func TestSearchPlan(t *testing.T) {
	sqlite.SetSearchBudgets(t, 4, 12)
	s := open(t, filepath.Join(t.TempDir(), "opsgate.db"))
	// Every document has "pod"; 6 (02, 05, … 17) have "restart"; 2 have
	// "etcd".
	var ds []docs.Document
	for i := range 20 {
		words := []string{"pod"}
		if i%3 == 2 {
			words = append(words, "restart")
		}
		if i == 4 || i == 11 {
			words = append(words, "etcd")
		}
		ds = append(ds, searchDoc(docs.WorkspaceScope, fmt.Sprintf("%02d.md", i), strings.Join(words, " ")+" in the cluster"))
	}
	saveAll(t, s, ds)
	search := func(limit int, terms ...string) []docs.Match {
		t.Helper()
		ms, err := s.SearchDocuments(t.Context(), docs.Query{Terms: terms, Scopes: []docs.Scope{docs.WorkspaceScope}, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range ms {
			if !(m.Text > 0) || i > 0 && m.Text > ms[i-1].Text {
				t.Errorf("SearchDocuments(%q): %s has Text %v after %v", terms, m.Doc.Path, m.Text, ms[max(i-1, 0)].Text)
			}
		}
		return ms
	}
	sorted := func(ms []docs.Match) []string {
		ps := paths(ms)
		slices.Sort(ps)
		return ps
	}

	// A rare word fits the budget: it is ranked over every document, the
	// common words are not.
	if d := cmp.Diff([]string{"04.md", "11.md"}, sorted(search(20, "pod", "etcd", "restart"))); d != "" {
		t.Errorf("rare word (-want +got):\n%s", d)
	}
	// The rarest word has more documents than the rank budget: it is ranked
	// over the newest documents, as many as hold about 4 of its matches
	// (the newest 20*4/6).
	if d := cmp.Diff([]string{"08.md", "11.md", "14.md", "17.md"}, sorted(search(20, "pod", "restart"))); d != "" {
		t.Errorf("word over the rank budget (-want +got):\n%s", d)
	}
	// Even the rarest word has more documents than the idf budget: the
	// newest documents that have it, all as relevant.
	ms := search(3, "pod")
	if d := cmp.Diff([]string{"19.md", "18.md", "17.md"}, paths(ms)); d != "" {
		t.Errorf("common words only (-want +got):\n%s", d)
	}
	if len(ms) == 3 && (ms[0].Text != ms[2].Text) {
		t.Errorf("common words only: Text %v … %v, want all the same", ms[0].Text, ms[2].Text)
	}
}
