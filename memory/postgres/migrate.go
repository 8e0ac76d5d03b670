package postgres

import (
	"context"
	"embed"
	"fmt"
	"slices"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/internal/migration"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrate applies the pending migrations, each in its own transaction, and
// returns the names of those it applied. Replicas starting together wait
// for each other on a session advisory lock, so each migration runs once. A
// database whose schema is newer than this binary knows is refused.
func (s *Store) Migrate(ctx context.Context) (applied []string, err error) {
	ms, err := migration.Load(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	// A session lock lives on its connection: hold one connection for the
	// whole migration and unlock on it.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	defer conn.Release()
	const key = `hashtextextended('opsgate:migrate', 0)`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+key+`)`); err != nil {
		return nil, fmt.Errorf("postgres: migrate: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+key+`)`)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	if latest := ms[len(ms)-1].Version; current > latest {
		return nil, fmt.Errorf("postgres: migrate: database schema version %d is newer than this opsgate knows (%d): upgrade opsgate", current, latest)
	}
	for _, m := range ms[current:] {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return applied, fmt.Errorf("postgres: migrate %s: %w", m.Name, err)
		}
		_, err = tx.Exec(ctx, m.SQL)
		if err == nil {
			_, err = tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
		}
		if err == nil {
			err = tx.Commit(ctx)
		}
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return applied, fmt.Errorf("postgres: migrate %s: %w", m.Name, err)
		}
		applied = append(applied, m.Name)
	}
	return applied, nil
}

// SchemaVersion returns the version of the newest applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.read(ctx, func(q querier) error {
		return q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// protectedTables are the append-only tables and the triggers that make
// them so: without them the audit log could be rewritten with SQL.
var protectedTables = map[string][]string{
	"audit":          {"audit_append_only", "audit_no_truncate"},
	"approval_votes": {"approval_votes_append_only", "approval_votes_no_truncate"},
	// A memory document's history is append-only too (docs/design.md §14).
	"memory_versions": {"memory_versions_append_only", "memory_versions_no_truncate"},
}

// CheckSchema returns a *core.SchemaError when a table the migrations
// created is missing, or a trigger protecting an append-only table is
// missing, disabled or joined by one opsgate did not create (a trigger can
// silently drop audit entries).
func (s *Store) CheckSchema(ctx context.Context) error {
	e := core.SchemaError{Store: "postgres"}
	tables := []string{"conversations", "inbound", "messages", "runs", "checkpoints", "approvals", "approval_votes", "audit",
		"memory_docs", "memory_versions", "memory_usage", "api_tokens", "events", "event_seqs"}
	type trigger struct{ table, name, enabled string }
	var have []string
	var trigs []trigger
	err := s.read(ctx, func(q querier) error {
		have, trigs = nil, nil
		rows, err := q.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				rows.Close()
				return err
			}
			have = append(have, t)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = q.Query(ctx, `SELECT c.relname, t.tgname, t.tgenabled::text FROM pg_trigger t
			JOIN pg_class c ON c.oid = t.tgrelid
			WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t trigger
			if err := rows.Scan(&t.table, &t.name, &t.enabled); err != nil {
				return err
			}
			trigs = append(trigs, t)
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("postgres: schema check: %w", err)
	}
	for _, t := range tables {
		if !slices.Contains(have, t) {
			e.Missing = append(e.Missing, "table "+t)
			e.Audit = e.Audit || protectedTables[t] != nil
		}
	}
	for table, names := range protectedTables {
		for _, name := range names {
			i := slices.IndexFunc(trigs, func(t trigger) bool { return t.table == table && t.name == name })
			switch {
			case i < 0:
				e.Missing = append(e.Missing, "trigger "+name)
			case trigs[i].enabled == "D":
				e.Changed = append(e.Changed, "trigger "+name+" (disabled)")
			default:
				continue
			}
			e.Audit = true
		}
	}
	for _, t := range trigs {
		if names, ok := protectedTables[t.table]; ok && !slices.Contains(names, t.name) {
			e.Unexpected = append(e.Unexpected, "trigger "+t.name+" on "+t.table)
			e.Audit = true
		}
	}
	if len(e.Missing)+len(e.Changed)+len(e.Unexpected) == 0 {
		return nil
	}
	slices.Sort(e.Missing)
	slices.Sort(e.Changed)
	return &e
}
