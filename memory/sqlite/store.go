package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	msqlite "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/opsgate/opsgate/core"
)

// Store is the SQLite implementation of core.Store. It is safe for
// concurrent use, also with other Stores (processes) on the same file.
type Store struct {
	path string
	w    *pool   // exactly one connection: every write goes through it
	r    *pool   // read-only connections
	dfs  dfCache // memory search's word statistics
	// openApplied are the migrations opening the store applied.
	openApplied []string
	// lazyTxHook, set by tests only, sees AppendEvents' transaction.
	lazyTxHook func(ctx context.Context, tx *sql.Tx)
}

var _ core.Store = (*Store)(nil)

// readerMmap is how much of the file read-only connections map.
const readerMmap = 1 << 30

// busyTimeout is how long a statement waits for another process's write
// lock before it fails with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// Open opens (creating it and its directory when needed) the database file
// at path, applies pending migrations and checks the schema (CheckSchema):
// a database whose audit log lost its protection is refused.
func Open(ctx context.Context, path string) (*Store, error) {
	s, err := open(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := s.CheckSchema(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenForInspection opens (and migrates) the store like Open, but a schema
// changed outside opsgate is returned as schemaErr rather than refused: the
// audit log's verifier must still read a store whose triggers were dropped,
// to say which entry was changed.
func OpenForInspection(ctx context.Context, path string) (s *Store, schemaErr error, err error) {
	if s, err = open(ctx, path); err != nil {
		return nil, nil, err
	}
	return s, s.CheckSchema(ctx), nil
}

func open(ctx context.Context, path string) (*Store, error) {
	if path == "" || path == ":memory:" || strings.Contains(path, "?") {
		// The driver reads parameters after "?"; an in-memory database would
		// be a different one for each connection.
		return nil, fmt.Errorf("sqlite: open %q: want a file path without '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	// Connect the writer first: it switches the file to WAL before any
	// reader connects.
	if err := connect(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers) // a new connection costs an open and its pragmas
	s := &Store{path: path, w: newPool(w), r: newPool(r)}
	if s.openApplied, err = s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// AppliedOnOpen returns the names of the migrations that opening the store
// applied (none when its schema was current), for `opsgate migrate` to say.
func (s *Store) AppliedOnOpen() []string { return s.openApplied }

// dsn is the modernc.org/sqlite data source name for path. Pragmas are
// given as _pragma=name(value); the driver runs busy_timeout first, so the
// others already wait for locks. synchronous stays FULL (the default):
// approvals and the audit log must survive a power cut, not only a crash.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		// Readers map the file rather than read(2) it into each
		// connection's small page cache: memory search reads index pages
		// all over a large file (a tenth less CPU at 100,000 documents).
		q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", readerMmap))
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	return path + "?" + q.Encode()
}

// connect opens the writer's connection, which switches a new file to WAL.
// That takes an exclusive lock for which SQLite does not always wait under
// busy_timeout (two processes creating the database at once get
// SQLITE_BUSY at once), so SQLITE_BUSY is retried here, for as long.
func connect(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(busyTimeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := db.PingContext(ctx)
		var e *msqlite.Error
		if err == nil || !errors.As(err, &e) || e.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// Ping checks that the database can be read and written to, for
// `opsgate doctor`.
func (s *Store) Ping(ctx context.Context) error {
	var n int
	if err := s.r.db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: ping: read: %w", err)
	}
	// An empty write transaction still takes the write lock.
	tx, err := s.w.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: ping: write: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: ping: write: %w", err)
	}
	return nil
}

// Close closes the database. Calls in progress may fail.
func (s *Store) Close() error {
	if err := errors.Join(s.r.close(), s.w.close()); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE), committing when fn
// returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *txn) error) error {
	tx, err := s.w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	t := &txn{tx: tx, w: s.w}
	if err = fn(t); err != nil {
		tx.Rollback()
	} else {
		err = tx.Commit()
	}
	// The connection is free again: prepare what the transaction could not
	// use prepared, for next time. A failure here only means it is not.
	for _, q := range t.missed {
		_, _ = s.w.stmt(context.WithoutCancel(ctx), q)
	}
	return err
}

// micros stores t as unix microseconds; the zero time as NULL.
func micros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// fromMicros is the inverse of micros, in UTC.
func fromMicros(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}

// ensureConversation creates the conversation key when it is missing, so
// that any method may be the first to use a conversation.
func ensureConversation(ctx context.Context, q queryer, key string) error {
	_, err := createConversation(ctx, q, key)
	return err
}

// createConversation is ensureConversation saying whether it created the
// conversation, whose activity is then now (no touch needed).
func createConversation(ctx context.Context, q queryer, key string) (created bool, err error) {
	res, err := q.exec(ctx, `INSERT INTO conversations (key, created_at, updated_at)
		VALUES (?1, ?2, `+nextActivity+`) ON CONFLICT (key) DO NOTHING`,
		key, micros(time.Now()))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// touchConversation records activity in the conversation key, creating it
// when missing.
func touchConversation(ctx context.Context, q queryer, key string) error {
	_, err := q.exec(ctx, `INSERT INTO conversations (key, created_at, updated_at)
		VALUES (?1, ?2, `+nextActivity+`) ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`,
		key, micros(time.Now()))
	return err
}

// nextActivity is the updated_at of an activity at time ?2: that time, or
// just after the latest activity of any conversation when that is later,
// so that activities are totally ordered (see 0003_conversation_activity).
// Writes are serialised, so no two get the same value.
const nextActivity = `max(?2, (SELECT coalesce(max(updated_at), 0) + 1 FROM conversations))`
