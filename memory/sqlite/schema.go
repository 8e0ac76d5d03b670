package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/opsgate/opsgate/core"
)

// schemaObject is one named entry of sqlite_master.
type schemaObject struct {
	kind, name, table, sql string
}

func (o schemaObject) String() string { return o.kind + " " + o.name }

// CheckSchema compares the database's tables, indexes and triggers with
// those its migrations create, and returns a *SchemaError naming what is
// missing or altered. Open calls it after migrating, so that a store whose
// audit log lost its append-only triggers is refused rather than used.
func (s *Store) CheckSchema(ctx context.Context) error {
	want, err := expectedSchema(ctx)
	if err != nil {
		return err
	}
	// The usual case, a store exactly as the migrations left it, is one
	// row to compare; anything else (an index an operator added, a
	// dropped trigger) is compared object by object below, which names
	// what differs.
	var text string
	if err := s.r.db.QueryRowContext(ctx, schemaTextQuery).Scan(&text); err != nil {
		return fmt.Errorf("sqlite: schema check: %w", err)
	}
	if text == expected.text {
		return nil
	}
	objectChecks.Add(1)
	got, err := readSchema(ctx, s.r.db)
	if err != nil {
		return err
	}
	have := map[string]schemaObject{}
	for _, o := range got {
		have[o.String()] = o
	}
	expected := map[string]bool{}
	e := core.SchemaError{Store: "sqlite"}
	for _, w := range want {
		expected[w.String()] = true
		g, ok := have[w.String()]
		switch {
		case !ok:
			e.Missing = append(e.Missing, w.String())
		case w.kind == "trigger" && g.sql != w.sql:
			e.Changed = append(e.Changed, w.String())
		default:
			continue
		}
		e.Audit = e.Audit || w.table == "audit"
	}
	for _, g := range got {
		if g.kind == "trigger" && !expected[g.String()] {
			e.Unexpected = append(e.Unexpected, g.String()+" on "+g.table)
			e.Audit = e.Audit || g.table == "audit"
		}
	}
	if len(e.Missing)+len(e.Changed)+len(e.Unexpected) == 0 {
		return nil
	}
	return &e
}

// expected is the schema the migrations make, read once per process:
// from schema_expected.go when it was written from the migrations this
// binary embeds (the usual case, costing nothing at start), else by
// migrating an in-memory database with the same code as a file (a few
// milliseconds and megabytes at every start, which issue 25 measured).
var expected struct {
	once sync.Once
	objs []schemaObject
	err  error
	// text is objs as schemaTextQuery writes them.
	text string
	// built counts the in-memory migrations, for the test that start-up
	// does none.
	built int
}

// objectChecks counts the schema checks that compared object by object,
// for the test that a store as the migrations left it needs none.
var objectChecks atomic.Int64

// schemaObjects selects what CheckSchema compares: tables, indexes and
// triggers without SQLite's internal ones, in creation order.
const schemaObjects = `FROM sqlite_master WHERE type IN ('table', 'index', 'trigger') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`

// schemaTextQuery writes the schema as one string, schemaText of what it
// selects: the SQL of triggers only, since that is all CheckSchema compares
// of an object beyond its kind and name.
const schemaTextQuery = `SELECT coalesce(group_concat(
	type || char(31) || name || char(31) || tbl_name || char(31) || CASE type WHEN 'trigger' THEN coalesce(sql, '') ELSE '' END,
	char(30) ORDER BY rowid), '') ` + schemaObjects

// schemaText is objs as schemaTextQuery writes them.
func schemaText(objs []schemaObject) string {
	var b strings.Builder
	for i, o := range objs {
		if i > 0 {
			b.WriteByte(30)
		}
		sql := ""
		if o.kind == "trigger" {
			sql = o.sql
		}
		b.WriteString(o.kind + "\x1f" + o.name + "\x1f" + o.table + "\x1f" + sql)
	}
	return b.String()
}

func expectedSchema(ctx context.Context) ([]schemaObject, error) {
	expected.once.Do(func() {
		defer func() { expected.text = schemaText(expected.objs) }()
		if sum, err := migrationsSum(); err == nil && sum == expectedSchemaSum {
			expected.objs = expectedSchemaObjects
			return
		}
		expected.built++
		expected.objs, expected.err = buildExpectedSchema(ctx)
	})
	return expected.objs, expected.err
}

// migrationsSum identifies the migrations this binary embeds: their
// versions, names and SQL.
func migrationsSum() (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%d\x00%s\x00%d\x00%s\x00", m.Version, m.Name, len(m.SQL), m.SQL)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// buildExpectedSchema migrates an in-memory database and reads its schema.
func buildExpectedSchema(ctx context.Context) ([]schemaObject, error) {
	// A caller's deadline must not leave a failure cached for good.
	ctx = context.WithoutCancel(ctx)
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, fmt.Errorf("sqlite: schema check: %w", err)
	}
	db.SetMaxOpenConns(1) // each connection would be another database
	// The smallest pages: the schema does not depend on the page size,
	// and this database's pages stay in memory (every table, index and
	// FTS5 shadow table has at least one).
	if _, err := db.ExecContext(ctx, "PRAGMA page_size = 512"); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: schema check: %w", err)
	}
	s := &Store{w: newPool(db), r: newPool(db)}
	defer s.w.close() // closes db; s.r holds no statements
	if _, err := s.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: schema check: %w", err)
	}
	return readSchema(ctx, db)
}

// readSchema lists the tables, indexes and triggers of db in creation
// order, without SQLite's internal ones.
func readSchema(ctx context.Context, db *sql.DB) ([]schemaObject, error) {
	rows, err := db.QueryContext(ctx, `SELECT type, name, tbl_name, coalesce(sql, '') `+schemaObjects+` ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: schema check: %w", err)
	}
	defer rows.Close()
	var objs []schemaObject
	for rows.Next() {
		var o schemaObject
		if err := rows.Scan(&o.kind, &o.name, &o.table, &o.sql); err != nil {
			return nil, fmt.Errorf("sqlite: schema check: %w", err)
		}
		objs = append(objs, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: schema check: %w", err)
	}
	return objs, nil
}
