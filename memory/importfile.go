package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/opsgate/opsgate/memory/docs"
)

// ImportReport is what Import did with each file, by path relative to the
// imported directory.
type ImportReport struct {
	Created   []string
	Updated   []string
	Unchanged []string
	Skipped   []SkippedFile
}

// SkippedFile is a file Import did not store, and why: a safety finding
// ("secret: aws_access_key"), bad front matter, an unreadable file.
type SkippedFile struct {
	Path   string
	Reason string
}

// String summarises the report for the CLI, one file a line, skipped
// files with their reasons.
func (r ImportReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d created, %d updated, %d unchanged, %d skipped\n", len(r.Created), len(r.Updated), len(r.Unchanged), len(r.Skipped))
	for _, l := range []struct {
		what  string
		paths []string
	}{{"created", r.Created}, {"updated", r.Updated}, {"unchanged", r.Unchanged}} {
		for _, p := range l.paths {
			fmt.Fprintf(&b, "  %-9s %s\n", l.what, p)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "  skipped   %s: %s\n", s.Path, s.Reason)
	}
	return b.String()
}

// Import stores every *.md file under dir, recursively (hidden
// directories such as .git excepted), as the document at the file's path
// relative to dir (DESIGN §14, `opsgate memory import`). Front matter sets
// the title, type, tags, entities, scope, trust and status; by default a
// file is an admin_approved workspace runbook. Import is idempotent: a
// file whose document already holds the same version is left unchanged.
// Every file is safety-scanned; one that fails, or whose front matter is
// wrong, is skipped with the reason in the report and the others are
// imported. by is the importer's identity ("cli:alice"), the author of
// what changed. The error is for a directory that cannot be read or a
// store that fails.
func (m *Memory) Import(ctx context.Context, dir, by string) (ImportReport, error) {
	var r ImportReport
	if fi, err := os.Stat(dir); err != nil {
		return r, fmt.Errorf("memory: import: %w", err)
	} else if !fi.IsDir() {
		return r, fmt.Errorf("memory: import: %s is not a directory", dir)
	}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != dir && strings.HasPrefix(e.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(filepath.Ext(p), ".md") || !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		outcome, reason, err := m.importFile(ctx, p, rel, by)
		switch {
		case err != nil:
			return err
		case outcome == "created":
			r.Created = append(r.Created, rel)
		case outcome == "updated":
			r.Updated = append(r.Updated, rel)
		case outcome == "unchanged":
			r.Unchanged = append(r.Unchanged, rel)
		default:
			r.Skipped = append(r.Skipped, SkippedFile{Path: rel, Reason: reason})
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("memory: import %s: %w", dir, err)
	}
	return r, nil
}

// importFile imports one file: created, updated or unchanged; or skipped
// with a reason. The error is the store's.
func (m *Memory) importFile(ctx context.Context, file, rel, by string) (outcome, reason string, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "skipped", err.Error(), nil
	}
	d, err := parseDocument(rel, b)
	if err != nil {
		return "skipped", err.Error(), nil
	}
	if fs := m.Scan(d.Title, d.Content); len(fs) > 0 {
		return "skipped", findings(fs), nil
	}
	d.Author, d.Source = by, docs.Source{File: rel}
	cur, err := m.store.DocumentAt(ctx, d.Scope, d.Path)
	switch {
	case err == nil && docs.Same(cur, d):
		return "unchanged", "", nil
	case err == nil:
		outcome = "updated"
	case errors.Is(err, docs.ErrNotFound):
		outcome = "created"
	default:
		return "", "", err
	}
	opt := docs.Save{Note: "imported by " + by, At: m.opt.Now()}
	if outcome == "updated" {
		opt.ExpectSHA = cur.SHA256 // what was compared is what is replaced
	}
	if _, err := m.store.SaveDocument(ctx, d, opt); err != nil {
		if errors.Is(err, docs.ErrConflict) {
			return "skipped", "changed by someone else during the import; import again", nil
		}
		return "", "", err
	}
	return outcome, "", nil
}
