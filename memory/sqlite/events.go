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
// Its commit does not wait for the disk (inLazyTx): the event log runs
// behind the runs, and the next durable commit makes it durable too.
// Rows go eventRows to a statement: one statement per token is most of
// the cost of keeping a streamed answer.
func (s *Store) AppendEvents(ctx context.Context, evs []core.Event) error {
	if len(evs) == 0 {
		return nil
	}
	err := s.inLazyTx(ctx, func(tx *txn) error {
		if s.lazyTxHook != nil {
			s.lazyTxHook(ctx, tx.tx)
		}
		args := make([]any, 0, 6*eventRows)
		for len(evs) > 0 {
			n := min(len(evs), eventRows)
			args = args[:0]
			for _, ev := range evs[:n] {
				body, err := json.Marshal(ev)
				if err != nil {
					return fmt.Errorf("event %d: %w", ev.Seq, err)
				}
				args = append(args, ev.ConvKey, ev.Seq, ev.RunID, string(ev.Type), ev.Time.UnixMicro(), body)
			}
			query := insertFull
			if n < eventRows {
				query = insertEvents(n)
			}
			if _, err := tx.exec(ctx, query, args...); err != nil {
				return err
			}
			evs = evs[n:]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: keep events: %w", err)
	}
	return nil
}

// eventRows is the most rows one INSERT of events carries.
const eventRows = 64

// insertFull is the INSERT of eventRows events.
var insertFull = insertEvents(eventRows)

// insertEvents is the INSERT of n events. Each size is prepared once on
// the writer and reused.
func insertEvents(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO events (conv_key, seq, run_id, type, at, body) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?, ?, ?, ?, ?, ?)`)
	}
	b.WriteString(` ON CONFLICT (conv_key, seq) DO NOTHING`)
	return b.String()
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
	switch {
	case q.Latest:
		where.WriteString(` ORDER BY seq DESC LIMIT 1`)
	default:
		where.WriteString(` ORDER BY seq`)
	}
	if q.Limit > 0 && !q.Latest {
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
