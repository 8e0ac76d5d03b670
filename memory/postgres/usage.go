package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/memory/docs"
)

// RecordUsage appends usage records (docs.Store) in one statement; a
// record without a time is stamped now.
func (s *Store) RecordUsage(ctx context.Context, us []docs.Usage) error {
	if len(us) == 0 {
		return nil
	}
	n := len(us)
	ids, convs, runs, scores, ats := make([]string, n), make([]string, n), make([]string, n), make([]float64, n), make([]time.Time, n)
	now := time.Now()
	for i, u := range us {
		ids[i], convs[i], runs[i], scores[i], ats[i] = u.DocID, u.ConvKey, u.RunID, u.Score, u.At
		if u.At.IsZero() {
			ats[i] = now
		}
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO memory_usage (doc_id, conv_key, run_id, score, at)
			SELECT doc_id, conv_key, run_id, score, at FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::timestamptz[])
			WITH ORDINALITY AS u(doc_id, conv_key, run_id, score, at, ord) ORDER BY ord`, ids, convs, runs, scores, ats)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: record memory usage: %w", err)
	}
	return nil
}

// Usages returns a document's usage records, newest first, at most limit
// (0: all) (docs.Store).
func (s *Store) Usages(ctx context.Context, docID string, limit int) ([]docs.Usage, error) {
	sql := `SELECT doc_id, conv_key, run_id, score, at FROM memory_usage WHERE doc_id = $1 ORDER BY at DESC, id DESC`
	args := []any{docID}
	if limit > 0 {
		sql += ` LIMIT $2`
		args = append(args, limit)
	}
	var out []docs.Usage
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (docs.Usage, error) {
			var u docs.Usage
			err := row.Scan(&u.DocID, &u.ConvKey, &u.RunID, &u.Score, &u.At)
			u.At = u.At.UTC()
			return u, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: memory usage of %q: %w", docID, err)
	}
	return out, nil
}
