// Package migration reads a store's embedded schema migrations: files named
// NNNN_description.sql, applied in version order, each once.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migration is one file, e.g. migrations/0001_init.sql.
type Migration struct {
	Version int
	Name    string // file name without .sql, e.g. "0001_init"
	SQL     string
}

// Load returns the migrations matching glob in fsys, in version order; the
// versions must be 1, 2, 3… without gaps.
func Load(fsys fs.FS, glob string) ([]Migration, error) {
	names, err := fs.Glob(fsys, glob)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, n := range names { // fs.Glob sorts, and versions are zero-padded
		name := strings.TrimSuffix(path.Base(n), ".sql")
		prefix, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(prefix)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a version number >= 1", n)
		}
		if want := len(ms) + 1; v != want {
			return nil, fmt.Errorf("migration %s: version %d, want %d", n, v, want)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no migrations match %s", glob)
	}
	return ms, nil
}
