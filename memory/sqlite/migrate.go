package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrations/, named NNNN_description.sql.
type migration struct {
	version int
	name    string // file name without .sql, e.g. "0001_init"
	sql     string
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, n := range names { // fs.Glob sorts, and versions are zero-padded
		name := strings.TrimSuffix(path.Base(n), ".sql")
		prefix, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(prefix)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a version number >= 1", n)
		}
		if len(ms) > 0 && v != ms[len(ms)-1].version+1 {
			return nil, fmt.Errorf("migration %s: version %d follows %d", n, v, ms[len(ms)-1].version)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	return ms, nil
}

// Migrate applies the pending migrations, each in its own transaction, and
// returns the names of those it applied (none when the schema is current).
// It is safe to run from several processes at once: each migration is
// applied once. A database whose schema is newer than this binary knows is
// refused rather than used.
func (s *Store) Migrate(ctx context.Context) (applied []string, err error) {
	ms, err := migrations()
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	if _, err := s.w.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return nil, fmt.Errorf("sqlite: migrate: %w", err)
	}
	current, err := s.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	if latest := ms[len(ms)-1].version; current > latest {
		return nil, fmt.Errorf("sqlite: migrate: database schema version %d is newer than this opsgate knows (%d): upgrade opsgate", current, latest)
	}
	for _, m := range ms {
		if m.version <= current {
			continue
		}
		ok, err := s.apply(ctx, m)
		if err != nil {
			return applied, fmt.Errorf("sqlite: migrate %s: %w", m.name, err)
		}
		if ok {
			applied = append(applied, m.name)
		}
	}
	return applied, nil
}

// apply runs m unless another process applied it first, which the write
// lock taken by BEGIN IMMEDIATE makes visible.
func (s *Store) apply(ctx context.Context, m migration) (ok bool, err error) {
	// Migrations run their SQL unprepared: each statement runs once.
	err = s.inTx(ctx, func(t *txn) error {
		tx := t.tx
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixMicro())
		ok = err == nil
		return err
	})
	return ok, err
}

// SchemaVersion returns the version of the newest applied migration, 0 for
// an empty database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.r.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	return v, nil
}
