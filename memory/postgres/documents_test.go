package postgres_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/docs/docstest"
)

// The same memory document suite as memory/sqlite.
func TestDocumentsConformance(t *testing.T) {
	docstest.Run(t, func(t *testing.T) docs.Store { return open(t, pgtest.DB(t)) })
}

// memory_versions is append-only, whoever runs the SQL.
func TestMemoryVersionsAppendOnly(t *testing.T) {
	url := pgtest.DB(t)
	s := open(t, url)
	ctx := t.Context()
	d := docs.Document{Scope: docs.WorkspaceScope, Path: "a.md", Content: "a", Type: docs.Runbook,
		Status: docs.Active, Trust: docs.AdminApproved}
	if _, err := s.SaveDocument(ctx, d, docs.Save{Note: "created"}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{
		`UPDATE memory_versions SET content = 'edited'`,
		`DELETE FROM memory_versions`,
		`TRUNCATE memory_versions`,
	} {
		if _, err := conn.Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want an append-only error", stmt, err)
		}
	}
}

// A document the schema would take but no reader could use is refused.
func TestSaveDocumentRejectsInvalid(t *testing.T) {
	s := open(t, pgtest.DB(t))
	good := docs.Document{Scope: docs.WorkspaceScope, Path: "a.md", Content: "a", Type: docs.Runbook,
		Status: docs.Active, Trust: docs.AdminApproved}
	for name, change := range map[string]func(*docs.Document){
		"empty path":         func(d *docs.Document) { d.Path = "" },
		"unknown scope kind": func(d *docs.Document) { d.Scope = docs.Scope{Kind: "team", Key: "x"} },
		"workspace with key": func(d *docs.Document) { d.Scope.Key = "x" },
		"channel without key": func(d *docs.Document) {
			d.Scope = docs.Scope{Kind: docs.Channel}
		},
		"unknown type":   func(d *docs.Document) { d.Type = "memo" },
		"unknown trust":  func(d *docs.Document) { d.Trust = "" },
		"unknown status": func(d *docs.Document) { d.Status = "deleted" },
	} {
		d := good
		change(&d)
		if _, err := s.SaveDocument(t.Context(), d, docs.Save{}); err == nil {
			t.Errorf("%s: SaveDocument succeeded", name)
		}
	}
	if ds, err := s.Documents(t.Context(), docs.Filter{}); err != nil || len(ds) != 0 {
		t.Errorf("Documents after refused saves = %d, %v; want none", len(ds), err)
	}
}

// memory_lexemes counts, for each lexeme, the documents holding it, through
// creations (concurrent ones too), edits, moves and archiving.
func TestLexemeCountsFollowSaves(t *testing.T) {
	url := pgtest.DB(t)
	s := open(t, url)
	ctx := t.Context()
	base := docs.Document{Scope: docs.WorkspaceScope, Type: docs.Runbook, Status: docs.Active, Trust: docs.AdminApproved}
	var wg sync.WaitGroup
	saved := make([]docs.Document, 12)
	errs := make([]error, len(saved))
	for i := range saved {
		wg.Go(func() {
			d := base
			d.Path, d.Title = fmt.Sprintf("n%d.md", i), fmt.Sprintf("note %d", i%3)
			d.Content = fmt.Sprintf("Restart the %s pods after the deploy of release %d.", []string{"payments", "ledger", "search"}[i%3], i)
			d.Tags, d.Entities = []string{"k8s"}, map[string][]string{"service": {"payments-api"}}
			saved[i], errs[i] = s.SaveDocument(ctx, d, docs.Save{})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	edit := saved[0]
	edit.Content, edit.Tags = "Nothing about the earlier words.", nil
	promote := saved[1]
	promote.Scope = docs.Scope{Kind: docs.Channel, Key: "slack:T1:C1"}
	archive := saved[2]
	archive.Status = docs.Archived
	for _, d := range []docs.Document{edit, promote, archive, saved[3]} {
		if _, err := s.SaveDocument(ctx, d, docs.Save{}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	counts := func(sql string) map[string]int {
		t.Helper()
		rows, err := conn.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int{}
		var l string
		var n int
		if _, err := pgx.ForEachRow(rows, []any{&l, &n}, func() error { m[l] = n; return nil }); err != nil {
			t.Fatal(err)
		}
		return m
	}
	want := counts(`SELECT lexeme, count(*)::int FROM memory_docs, unnest(tsvector_to_array(search)) AS lexeme GROUP BY lexeme
		UNION ALL SELECT '', count(*)::int FROM memory_docs`)
	got := counts(`SELECT lexeme, ndocs FROM memory_lexemes WHERE ndocs <> 0`)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("memory_lexemes differs from the documents' lexemes (-want +got):\n%s", d)
	}
	if want["restart"] != 11 || want[""] != 12 {
		t.Errorf("restart in %d of %d documents, want 11 of 12 (the test's own premise)", want["restart"], want[""])
	}
}

// A search whose terms most documents hold ranks its candidates only (see
// SearchDocuments), yet finds the documents holding its rarer terms first
// and fills its limit.
func TestSearchBeyondTheBudget(t *testing.T) {
	s := open(t, pgtest.DB(t))
	ctx := t.Context()
	const n = 400 // more than searchBudget documents hold "deploy" and "pipeline"
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Go(func() {
			for i := w; i < n && errs[w] == nil; i += len(errs) {
				d := docs.Document{Scope: docs.WorkspaceScope, Path: fmt.Sprintf("filler/%03d.md", i), Type: docs.Runbook,
					Status: docs.Active, Trust: docs.AdminApproved,
					Content: fmt.Sprintf("We deploy service %d with the pipeline; the pipeline runs the deploy checks.", i)}
				if i%2 == 0 {
					d.Content += " Watch the canary."
				}
				_, errs[w] = s.SaveDocument(ctx, d, docs.Save{})
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []docs.Document{
		{Path: "etcd.md", Content: "An etcd member was replaced; deploy paused."},
		{Path: "quorum.md", Content: "The etcd quorum was lost during the deploy; the pipeline stopped."},
	} {
		d.Scope, d.Type, d.Status, d.Trust = docs.WorkspaceScope, docs.IncidentLesson, docs.Active, docs.UserAuthored
		if _, err := s.SaveDocument(ctx, d, docs.Save{}); err != nil {
			t.Fatal(err)
		}
	}
	ws := []docs.Scope{docs.WorkspaceScope}
	for _, tt := range []struct {
		terms []string
		first []string // the first matches, in order
	}{
		{[]string{"deploy", "pipeline", "etcd", "quorum"}, []string{"quorum.md", "etcd.md"}},
		{[]string{"pipeline", "quorum"}, []string{"quorum.md"}},
		{[]string{"deploy", "canary", "pipeline"}, nil}, // three common terms: pairs of them
		{[]string{"deploy"}, nil},                       // one term in every document
	} {
		ms, err := s.SearchDocuments(ctx, docs.Query{Terms: tt.terms, Scopes: ws, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 10 {
			t.Errorf("SearchDocuments(%q) = %d matches, want 10", tt.terms, len(ms))
		}
		for i, p := range tt.first {
			if i >= len(ms) || ms[i].Doc.Path != p {
				t.Errorf("SearchDocuments(%q): match %d is not %s: %v", tt.terms, i, p, pathsOf(ms))
			}
		}
		for i, m := range ms {
			if m.Text <= 0 || i > 0 && m.Text > ms[i-1].Text {
				t.Errorf("SearchDocuments(%q): match %d has Text %v after %v", tt.terms, i, m.Text, ms[max(i-1, 0)].Text)
			}
		}
	}
}

func pathsOf(ms []docs.Match) []string {
	var ps []string
	for _, m := range ms {
		ps = append(ps, m.Doc.Path)
	}
	return ps
}
