package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

// AppendEvents keeps evs in one round trip; an event already kept is left.
func (s *Store) AppendEvents(ctx context.Context, evs []core.Event) error {
	if len(evs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	// The event log runs behind the runs (docs/design.md §12): its commit
	// does not wait for the WAL to reach the disk, and the next durable
	// commit, flushing the WAL past it, makes it durable too. SET LOCAL
	// ends with the transaction.
	b.Queue(`SET LOCAL synchronous_commit TO off`)
	if s.eventsTxHook != nil {
		s.eventsTxHook(b)
	}
	for _, ev := range evs {
		body, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("postgres: keep event %d: %w", ev.Seq, err)
		}
		b.Queue(`INSERT INTO events (conv_key, seq, run_id, type, at, body) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (conv_key, seq) DO NOTHING`, ev.ConvKey, ev.Seq, ev.RunID, string(ev.Type), ev.Time, body)
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
	if err != nil {
		return fmt.Errorf("postgres: keep events: %w", err)
	}
	return nil
}

// Events returns the kept events q selects, in Seq order.
func (s *Store) Events(ctx context.Context, q core.EventQuery) ([]core.Event, error) {
	query := `SELECT body FROM events WHERE conv_key = $1 AND seq > $2`
	args := []any{q.ConvKey, q.After}
	if q.RunID != "" {
		args = append(args, q.RunID)
		query += ` AND run_id = $` + strconv.Itoa(len(args))
	}
	if q.Latest {
		query += ` ORDER BY seq DESC LIMIT 1`
	} else {
		query += ` ORDER BY seq`
	}
	if q.Limit > 0 && !q.Latest {
		args = append(args, q.Limit)
		query += ` LIMIT $` + strconv.Itoa(len(args))
	}
	var out []core.Event
	err := s.read(ctx, func(qr querier) error {
		out = nil
		rows, err := qr.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var body []byte
			if err := rows.Scan(&body); err != nil {
				return err
			}
			var ev core.Event
			if err := json.Unmarshal(body, &ev); err != nil {
				return fmt.Errorf("a kept event does not decode: %w", err)
			}
			out = append(out, ev)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: events of %q: %w", q.ConvKey, err)
	}
	return out, nil
}

// PruneEvents deletes the events older than before.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM events WHERE at < $1`, before)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: prune events: %w", err)
	}
	return n, nil
}
