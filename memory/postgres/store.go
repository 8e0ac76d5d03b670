package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/opsgate/opsgate/core"
)

// Store is the PostgreSQL implementation of core.Store. It is safe for
// concurrent use, also by several processes (replicas) on one database.
type Store struct {
	pool *pgxpool.Pool
	// retryFor is how long an operation keeps retrying while the server is
	// unreachable.
	retryFor time.Duration
	// openApplied are the migrations opening the store applied.
	openApplied []string
	// eventsTxHook, set by tests only, adds to AppendEvents' batch.
	eventsTxHook func(b *pgx.Batch)
}

var _ core.Store = (*Store)(nil)

// DefaultRetry is how long a store operation waits for an unreachable
// server (a restart, a failover) before it fails.
const DefaultRetry = 15 * time.Second

// Open connects to the database at url (postgres://…), applies pending
// migrations under an advisory lock (replicas starting together migrate
// once) and checks the schema: a database whose audit log lost its
// protection is refused.
func Open(ctx context.Context, url string) (*Store, error) {
	s, err := open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := s.CheckSchema(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenForInspection opens (and migrates) the store like Open, but returns
// a schema changed outside opsgate as schemaErr instead of refusing it, so
// that `opsgate audit verify` can still read it.
func OpenForInspection(ctx context.Context, url string) (s *Store, schemaErr error, err error) {
	if s, err = open(ctx, url); err != nil {
		return nil, nil, err
	}
	return s, s.CheckSchema(ctx), nil
}

func open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", redactURL(url), err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	// A pool's connections are checked before use after they were idle, so
	// that a restarted server costs one failed ping, not a failed query.
	cfg.HealthCheckPeriod = 10 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", redactURL(url), err)
	}
	s := &Store{pool: pool, retryFor: DefaultRetry}
	if err := s.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%w (store.url %s)", err, redactURL(url))
	}
	if s.openApplied, err = s.Migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// AppliedOnOpen returns the names of the migrations that opening the store
// applied (none when its schema was current), for `opsgate migrate` to say.
func (s *Store) AppliedOnOpen() []string { return s.openApplied }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Close closes every connection. Calls in progress may fail.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// querier is what a pool and a transaction have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// inTx runs fn in a transaction, committing when fn returns nil. A lost
// connection or a serialization failure before the commit is retried
// (nothing was committed); a failure of the commit itself is not, since
// its outcome is unknown.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.retry(ctx, func() (bool, error) {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return transient(err), err
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return transient(err), err
		}
		err = tx.Commit(ctx)
		var pgErr *pgconn.PgError
		// A serialization failure at commit rolled back: safe to retry.
		return errors.As(err, &pgErr) && retryCode(pgErr.Code), err
	})
}

// read runs an idempotent read, retrying it while the server is away.
func (s *Store) read(ctx context.Context, fn func(q querier) error) error {
	return s.retry(ctx, func() (bool, error) {
		err := fn(s.pool)
		return transient(err), err
	})
}

// retry calls fn until it succeeds, fails for good, or the server stayed
// unreachable for s.retryFor.
func (s *Store) retry(ctx context.Context, fn func() (again bool, err error)) error {
	deadline := time.Now().Add(s.retryFor)
	for delay := 50 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		again, err := fn()
		if err == nil || !again || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// transient reports whether err means the server could not be reached or
// asked for a retry, rather than that the operation failed.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return retryCode(pgErr.Code)
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		pgconn.SafeToRetry(err)
}

// retryCode reports whether a server error is worth a retry: connection
// exceptions, a server shutting down or starting, serialization failures
// and deadlocks.
func retryCode(code string) bool {
	switch code {
	case "40001", "40P01", "57P01", "57P02", "57P03":
		return true
	}
	return len(code) == 5 && code[:2] == "08"
}

// ts stores t as timestamptz; the zero time as NULL.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// fromTS is the inverse of ts, in UTC.
func fromTS(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// lock takes a transaction-scoped advisory lock named name: writes that
// must see each other (the audit chain's last hash, the order of
// conversation activity) are serialised across replicas.
func lock(ctx context.Context, tx pgx.Tx, name string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "opsgate:"+name)
	return err
}
