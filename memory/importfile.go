package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/opsgate/opsgate/memory/docs"
)

// ImportReport is what Import did with each file, by path relative to the
// imported directory.
type ImportReport struct {
	Created   []string
	Updated   []string
	Unchanged []string
	// Skipped are files not imported for what they are, not for what
	// they say: too large, binary, a symlink, a name with control
	// characters, bad front matter, unreadable. A skip is not a finding.
	Skipped []SkippedFile
	// Refused are files the safety scanner refused: a secret, an
	// injection, a raw log dump (docs/design.md §14, §17).
	Refused []SkippedFile
}

// SkippedFile is a file Import did not store, and why: a safety finding
// ("secret: aws_access_key"), bad front matter, an unreadable file.
type SkippedFile struct {
	Path   string
	Reason string
}

// String summarises the report for the CLI, one file a line, skipped and
// refused files with their reasons. Paths are shown with control
// characters escaped: a file name is data and must not break the table.
func (r ImportReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d created, %d updated, %d unchanged, %d skipped, %d refused\n",
		len(r.Created), len(r.Updated), len(r.Unchanged), len(r.Skipped), len(r.Refused))
	for _, l := range []struct {
		what  string
		paths []string
	}{{"created", r.Created}, {"updated", r.Updated}, {"unchanged", r.Unchanged}} {
		for _, p := range l.paths {
			fmt.Fprintf(&b, "  %-9s %s\n", l.what, EscapeControls(p))
		}
	}
	for _, l := range []struct {
		what  string
		files []SkippedFile
	}{{"skipped", r.Skipped}, {"refused", r.Refused}} {
		for _, s := range l.files {
			fmt.Fprintf(&b, "  %-9s %s: %s\n", l.what, EscapeControls(s.Path), s.Reason)
		}
	}
	return b.String()
}

// Import stores every *.md file under dir, recursively (hidden
// directories such as .git excepted), as the document at the file's path
// relative to dir (docs/design.md §14, `opsgate memory import`). See ImportFS.
func (m *Memory) Import(ctx context.Context, dir, by string) (ImportReport, error) {
	if fi, err := os.Stat(dir); err != nil {
		return ImportReport{}, fmt.Errorf("memory: import: %w", err)
	} else if !fi.IsDir() {
		return ImportReport{}, fmt.Errorf("memory: import: %s is not a directory", dir)
	}
	r, err := m.ImportFS(ctx, os.DirFS(dir), by)
	if err != nil {
		return r, fmt.Errorf("memory: import %s: %w", dir, err)
	}
	return r, nil
}

// ImportFS is Import of a file system (os.DirFS of the directory). Front
// matter sets the title, type, tags, entities, scope, trust and status; by
// default a file is an admin_approved workspace runbook. Import is
// idempotent: a file whose document already holds the same version is
// left unchanged.
//
// Memory input is data, checked before it is read (docs/design.md §17): a symlink
// (never followed), a name with control characters, a file over
// Options.MaxDocBytes (from its size alone: it is never opened) and binary
// content (a NUL byte or invalid UTF-8) are skipped, each with its reason;
// so is bad front matter. What is read is safety-scanned, and a file with
// a finding is refused. The others are imported. by is the importer's
// identity ("cli:alice"), the author of what changed. The error is for a
// directory that cannot be read or a store that fails.
func (m *Memory) ImportFS(ctx context.Context, fsys fs.FS, by string) (ImportReport, error) {
	var r ImportReport
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != "." && strings.HasPrefix(e.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		isMD := strings.EqualFold(path.Ext(p), ".md")
		skip := func(reason string) error {
			r.Skipped = append(r.Skipped, SkippedFile{Path: p, Reason: reason})
			return nil
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			// Reported whatever its name: a link to a directory could
			// hide files, one to a file could reach outside the folder.
			return skip("symlink: not followed")
		case !isMD:
			return nil
		case hasControl(p):
			return skip("name has control characters")
		case !e.Type().IsRegular():
			return skip("not a regular file")
		}
		outcome, reason, err := m.importFile(ctx, fsys, e, p, by)
		switch {
		case err != nil:
			return err
		case outcome == "created":
			r.Created = append(r.Created, p)
		case outcome == "updated":
			r.Updated = append(r.Updated, p)
		case outcome == "unchanged":
			r.Unchanged = append(r.Unchanged, p)
		case outcome == "refused":
			r.Refused = append(r.Refused, SkippedFile{Path: p, Reason: reason})
		default:
			return skip(reason)
		}
		return nil
	})
	if len(r.Created)+len(r.Updated) > 0 {
		m.stats.invalidate() // new words weigh differently
	}
	return r, err
}

// importFile imports one file: created, updated or unchanged; skipped or
// refused with a reason. The error is the store's.
func (m *Memory) importFile(ctx context.Context, fsys fs.FS, e fs.DirEntry, rel, by string) (outcome, reason string, err error) {
	limit := m.opt.MaxDocBytes
	info, err := e.Info() // lstat: the size, without opening the file
	if err != nil {
		return "skipped", err.Error(), nil
	}
	if info.Size() > int64(limit) {
		return "skipped", tooLarge(info.Size(), limit), nil
	}
	b, err := readAtMost(fsys, rel, limit)
	switch {
	case errors.Is(err, errTooLarge):
		return "skipped", tooLarge(int64(len(b)), limit), nil
	case err != nil:
		return "skipped", err.Error(), nil
	}
	if why := binary(b); why != "" {
		return "skipped", "binary content (" + why + ")", nil
	}
	d, err := parseDocument(rel, b)
	if err != nil {
		return "skipped", err.Error(), nil
	}
	if fs := m.Scan(d.Title, d.Content); len(fs) > 0 {
		return "refused", findings(fs), nil
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

var errTooLarge = errors.New("too large")

// readAtMost reads name whole when it holds at most limit bytes; a file
// that grew past its stat'ed size stops being read at limit+1 bytes.
func readAtMost(fsys fs.FS, name string, limit int) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return b, errTooLarge
	}
	return b, nil
}

func tooLarge(size int64, limit int) string {
	return fmt.Sprintf("too large: %d bytes > %d (memory.max_doc_bytes); not read", size, limit)
}

// binary says why b is no text document ("NUL byte", "invalid UTF-8"),
// or "".
func binary(b []byte) string {
	if bytes.IndexByte(b, 0) >= 0 {
		return "NUL byte"
	}
	if !utf8.Valid(b) {
		return "invalid UTF-8"
	}
	return ""
}

// hasControl reports whether s holds a C0 or C1 control character or DEL.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f {
			return true
		}
	}
	return false
}

// EscapeControls shows s's control characters as Go escapes (\n, \x1b) and
// leaves the rest: for a name that is data, on one line of a table.
func EscapeControls(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
