package docstest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// Importer is a store with a bulk path for many new documents (the bench's
// and bulk imports' fast path).
type Importer interface {
	docs.Store
	ImportDocuments(ctx context.Context, ds []docs.Document) error
}

// RunImport checks the bulk path: imported documents are stored as
// SaveDocument stores them (version 1, history, age kept), found by search
// together with documents saved the ordinary way; a taken path fails the
// whole import.
func RunImport(t *testing.T, s Importer) {
	ctx := t.Context()
	old := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var ds []docs.Document
	for i := range 50 {
		ds = append(ds, docs.Document{Scope: docs.WorkspaceScope, Path: fmt.Sprintf("gen/%02d.md", i),
			Title: fmt.Sprintf("runbook %d", i), Content: fmt.Sprintf("restart the worker%d pods", i),
			Type: docs.Runbook, Status: docs.Active, Trust: docs.AdminApproved,
			Entities: map[string][]string{"service": {fmt.Sprintf("worker%d", i)}}, UpdatedAt: old})
	}
	if err := s.ImportDocuments(ctx, ds); err != nil {
		t.Fatal(err)
	}
	// One more saved the ordinary way counts on top of the imported ones.
	if _, err := s.SaveDocument(ctx, docs.Document{Scope: docs.WorkspaceScope, Path: "saved.md", Title: "saved",
		Content: "restart the pods", Type: docs.Runbook, Status: docs.Active, Trust: docs.AdminApproved}, docs.Save{}); err != nil {
		t.Fatal(err)
	}
	ms, err := s.SearchDocuments(ctx, docs.Query{Terms: []string{"worker17"}, Scopes: []docs.Scope{docs.WorkspaceScope}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Doc.Path != "gen/17.md" {
		t.Fatalf("search worker17: %+v", ms)
	}
	if ms, err := s.SearchDocuments(ctx, docs.Query{Terms: []string{"restart", "pods"}, Scopes: []docs.Scope{docs.WorkspaceScope}, Limit: 100}); err != nil || len(ms) != 51 {
		t.Errorf("search restart pods: %d matches, %v; want 51", len(ms), err)
	}
	d := ms[0].Doc
	if d.Version != 1 || d.SHA256 != docs.Hash(d.Content) || !d.UpdatedAt.Equal(old) || !d.CreatedAt.Equal(old) {
		t.Errorf("imported document: version %d, sha %s, created %v, updated %v", d.Version, d.SHA256, d.CreatedAt, d.UpdatedAt)
	}
	if h, err := s.History(ctx, d.ID); err != nil || len(h) != 1 || h[0].Note != "imported" {
		t.Errorf("history: %+v, %v", h, err)
	}

	again := []docs.Document{{Scope: docs.WorkspaceScope, Path: "gen/new.md", Title: "new", Content: "new",
		Type: docs.Runbook, Status: docs.Active, Trust: docs.AdminApproved}, ds[3]}
	if err := s.ImportDocuments(ctx, again); !errors.Is(err, docs.ErrPathTaken) {
		t.Fatalf("import over a taken path: %v, want ErrPathTaken", err)
	}
	if _, err := s.DocumentAt(ctx, docs.WorkspaceScope, "gen/new.md"); !errors.Is(err, docs.ErrNotFound) {
		t.Errorf("a failed import saved gen/new.md: %v", err)
	}
}
