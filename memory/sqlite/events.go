package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// AppendEvents keeps evs in one transaction; an event already kept is left.
func (s *Store) AppendEvents(ctx context.Context, evs []core.Event) error {
	if len(evs) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *txn) error {
		for _, ev := range evs {
			body, err := json.Marshal(ev)
			if err != nil {
				return fmt.Errorf("event %d: %w", ev.Seq, err)
			}
			if _, err := tx.exec(ctx, `INSERT INTO events (conv_key, seq, run_id, type, at, body)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (conv_key, seq) DO NOTHING`,
				ev.ConvKey, ev.Seq, ev.RunID, string(ev.Type), ev.Time.UnixMicro(), body); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: keep events: %w", err)
	}
	return nil
}

// Events returns the kept events q selects, in Seq order.
func (s *Store) Events(ctx context.Context, q core.EventQuery) ([]core.Event, error) {
	var where strings.Builder
	where.WriteString(`SELECT body FROM events WHERE conv_key = ? AND seq > ?`)
	args := []any{q.ConvKey, q.After}
	if q.RunID != "" {
		where.WriteString(` AND run_id = ?`)
		args = append(args, q.RunID)
	}
	where.WriteString(` ORDER BY seq`)
	if q.Limit > 0 {
		where.WriteString(` LIMIT ?`)
		args = append(args, q.Limit)
	}
	rows, err := s.r.query(ctx, where.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: events of %q: %w", q.ConvKey, err)
	}
	defer rows.Close()
	var out []core.Event
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("sqlite: events of %q: %w", q.ConvKey, err)
		}
		var ev core.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			return nil, fmt.Errorf("sqlite: events of %q: a kept event does not decode: %w", q.ConvKey, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: events of %q: %w", q.ConvKey, err)
	}
	return out, nil
}

// PruneEvents deletes the events older than before.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.w.exec(ctx, `DELETE FROM events WHERE at < ?`, before.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune events: %w", err)
	}
	return res.RowsAffected()
}
