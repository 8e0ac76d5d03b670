package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// RecordUsage appends usage records in one transaction.
func (s *Store) RecordUsage(ctx context.Context, us []docs.Usage) error {
	if len(us) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *txn) error {
		for _, u := range us {
			if _, err := tx.exec(ctx, `INSERT INTO memory_usage (doc_id, conv_key, run_id, score, at) VALUES (?, ?, ?, ?, ?)`,
				u.DocID, u.ConvKey, u.RunID, u.Score, u.At.UnixMicro()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: record memory usage: %w", err)
	}
	return nil
}

// Usages returns document docID's usage records, newest first, at most
// limit (0: all).
func (s *Store) Usages(ctx context.Context, docID string, limit int) ([]docs.Usage, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.query(ctx, `SELECT doc_id, conv_key, run_id, score, at FROM memory_usage
		WHERE doc_id = ? ORDER BY at DESC, id DESC LIMIT ?`, docID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: memory usages %s: %w", docID, err)
	}
	defer rows.Close()
	var us []docs.Usage
	for rows.Next() {
		var u docs.Usage
		var at int64
		if err := rows.Scan(&u.DocID, &u.ConvKey, &u.RunID, &u.Score, &at); err != nil {
			return nil, fmt.Errorf("sqlite: memory usages %s: %w", docID, err)
		}
		u.At = time.UnixMicro(at).UTC()
		us = append(us, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: memory usages %s: %w", docID, err)
	}
	return us, nil
}
