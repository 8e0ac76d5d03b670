package sqlite

import (
	"context"
	"embed"
	"fmt"
	"sync"
	"time"

	"github.com/opsgate/opsgate/memory/internal/migration"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations are read once per process: Migrate and the schema check's
// migrationsSum both need them, and each read copied every file (issue 25).
var migrations = sync.OnceValues(func() ([]migration.Migration, error) {
	return migration.Load(migrationFiles, "migrations/*.sql")
})

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
	if latest := ms[len(ms)-1].Version; current > latest {
		return nil, fmt.Errorf("sqlite: migrate: database schema version %d is newer than this opsgate knows (%d): upgrade opsgate", current, latest)
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		ok, err := s.apply(ctx, m)
		if err != nil {
			return applied, fmt.Errorf("sqlite: migrate %s: %w", m.Name, err)
		}
		if ok {
			applied = append(applied, m.Name)
		}
	}
	return applied, nil
}

// apply runs m unless another process applied it first, which the write
// lock taken by BEGIN IMMEDIATE makes visible.
func (s *Store) apply(ctx context.Context, m migration.Migration) (ok bool, err error) {
	// Migrations run their SQL unprepared: each statement runs once.
	err = s.inTx(ctx, func(t *txn) error {
		tx := t.tx
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UnixMicro())
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
