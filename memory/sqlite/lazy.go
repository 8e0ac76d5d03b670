package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
)

// inLazyTx runs fn in a write transaction, like inTx, whose commit does
// not fsync: the writer's connection is switched to synchronous=NORMAL for
// this one transaction and back to FULL before anyone else can use it.
//
// Only the event log commits this way (AppendEvents). It is written behind
// the runs, 100 ms after the events (core/eventlog.go), so a kill -9
// already loses its last events; a power cut may now lose the ones since
// the last durable commit as well. In WAL mode the frames of a lazy commit
// come before those of any later commit in the same log, so the next
// durable commit (a message, a run step, an approval) makes them durable
// with its own fsync, and nothing durable ever depends on an event
// (docs/design.md §12). What it saves is an fsync per batch of events
// on the one writer connection that a new message's commit waits for.
func (s *Store) inLazyTx(ctx context.Context, fn func(tx *txn) error) error {
	missed, err := s.lazyTx(ctx, fn)
	// The connection is free again: prepare what the transaction could not
	// use prepared, for next time.
	for _, q := range missed {
		_, _ = s.w.stmt(context.WithoutCancel(ctx), q)
	}
	return err
}

func (s *Store) lazyTx(ctx context.Context, fn func(tx *txn) error) (missed []string, err error) {
	conn, err := s.w.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Back to FULL whatever happened; a connection that cannot be put
		// back is discarded rather than left lazy for the next writer.
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous = FULL`); rerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			err = errors.Join(err, fmt.Errorf("restore synchronous=FULL: %w", rerr))
		}
		conn.Close()
	}()
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`); err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	t := &txn{tx: tx, w: s.w}
	if err := fn(t); err != nil {
		tx.Rollback()
		return t.missed, err
	}
	return t.missed, tx.Commit()
}
