package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/opsgate/opsgate/memory/docs"
)

// Export writes the documents f matches (all of them, archived included,
// for a zero Filter) to w as JSON Lines, one docs.Document a line, by
// scope, then path: everything about each document's current version,
// ids, authors, sources and times included (`opsgate memory export`).
func (m *Memory) Export(ctx context.Context, w io.Writer, f docs.Filter) error {
	ds, err := m.store.Documents(ctx, f)
	if err != nil {
		return fmt.Errorf("memory: export: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, d := range ds {
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("memory: export: %w", err)
		}
	}
	return nil
}

// ExportDir writes the documents f matches into dir as Markdown files with
// front matter, each at its path, which Import reads back as the same
// documents (scope, path, title, content, type, tags, entities, trust and
// status; not ids, authors or history). Paths are unique per scope only,
// so two matched documents with one path (say a workspace runbook and a
// channel's note) are an error naming both: export one scope at a time.
// Existing files are overwritten.
func (m *Memory) ExportDir(ctx context.Context, dir string, f docs.Filter) error {
	ds, err := m.store.Documents(ctx, f)
	if err != nil {
		return fmt.Errorf("memory: export: %w", err)
	}
	byPath := map[string]docs.Document{}
	for _, d := range ds {
		if !filepath.IsLocal(filepath.FromSlash(d.Path)) {
			return fmt.Errorf("memory: export: %s %s: not a relative path inside the directory", d.Scope, d.Path)
		}
		if !strings.EqualFold(filepath.Ext(d.Path), ".md") {
			return fmt.Errorf("memory: export: %s %s: not a .md path, which import would not read back; use Export (JSON Lines)", d.Scope, d.Path)
		}
		if o, ok := byPath[d.Path]; ok {
			return fmt.Errorf("memory: export: %s is the path of a document of %s and one of %s; export one scope at a time", d.Path, o.Scope, d.Scope)
		}
		byPath[d.Path] = d
	}
	for _, d := range ds {
		b, err := renderDocument(d)
		if err != nil {
			return fmt.Errorf("memory: export %s: %w", d.Path, err)
		}
		file := filepath.Join(dir, filepath.FromSlash(d.Path))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return fmt.Errorf("memory: export: %w", err)
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return fmt.Errorf("memory: export: %w", err)
		}
	}
	return nil
}
