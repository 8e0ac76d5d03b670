package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// pool is a connection pool with its prepared statements. Every statement
// is prepared once per connection, on first use, and kept: parsing and
// planning the SQL again on every call was a quarter of the engine's time
// when fsync is free. The statements are a fixed set of constants (and a
// few WHERE variants), so the cache stays small.
type pool struct {
	db *sql.DB

	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newPool(db *sql.DB) *pool {
	return &pool{db: db, stmts: map[string]*sql.Stmt{}}
}

// cached returns the prepared statement of query, or nil when it was never
// prepared.
func (p *pool) cached(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stmts[query]
}

// stmt returns the prepared statement of query, preparing it first when
// needed. It waits for a free connection, so it must not be called while
// holding the writer's only connection (in a transaction): see txn.stmt.
func (p *pool) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := p.cached(query); st != nil {
		return st, nil
	}
	st, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.stmts[query]; old != nil {
		st.Close() // prepared meanwhile by another caller
		return old, nil
	}
	p.stmts[query] = st
	return st, nil
}

func (p *pool) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (p *pool) queryRow(ctx context.Context, query string, args ...any) scanner {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

func (p *pool) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// close closes the statements and then the pool.
func (p *pool) close() error {
	p.mu.Lock()
	var errs []error
	for q, st := range p.stmts {
		errs = append(errs, st.Close())
		delete(p.stmts, q)
	}
	p.mu.Unlock()
	return errors.Join(append(errs, p.db.Close())...)
}

// txn is a write transaction that uses the writer's prepared statements.
type txn struct {
	tx *sql.Tx
	w  *pool
	// missed are statements not prepared on the writer yet; inTx prepares
	// them once the transaction has given the connection back.
	missed []string
}

func (t *txn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := t.w.cached(query); st != nil {
		return t.tx.StmtContext(ctx, st), nil
	}
	t.missed = append(t.missed, query)
	return t.tx.PrepareContext(ctx, query)
}

func (t *txn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (t *txn) queryRow(ctx context.Context, query string, args ...any) scanner {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// queryer is what a pool and a transaction have in common.
type queryer interface {
	exec(ctx context.Context, query string, args ...any) (sql.Result, error)
	queryRow(ctx context.Context, query string, args ...any) scanner
}

var (
	_ queryer = (*pool)(nil)
	_ queryer = (*txn)(nil)
)

// scanner is what *sql.Row and *sql.Rows have in common.
type scanner interface {
	Scan(dest ...any) error
}

// errRow is a row whose statement could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
