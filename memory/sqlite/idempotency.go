package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/core"
)

// ClaimIdempotencyKey records k unless conversation k.ConvKey holds k.Key
// from notBefore on; it returns the record that holds the key, and whether
// it is k. Records older than notBefore are forgotten on the way. The
// store's one writer makes the claim atomic: of two at once, one wins.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k core.IdempotencyKey, notBefore time.Time) (held core.IdempotencyKey, claimed bool, err error) {
	err = s.inTx(ctx, func(tx *txn) error {
		if _, err := tx.exec(ctx, `DELETE FROM api_idempotency WHERE created_at < ?`, notBefore.UnixMicro()); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `INSERT INTO api_idempotency (conv_key, key, body_hash, run_id, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (conv_key, key) DO NOTHING`,
			k.ConvKey, k.Key, k.BodyHash, k.RunID, k.CreatedAt.UnixMicro())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			held, claimed = k, err == nil
			return err
		}
		var created int64
		held = core.IdempotencyKey{ConvKey: k.ConvKey, Key: k.Key}
		err = tx.queryRow(ctx, `SELECT body_hash, run_id, created_at FROM api_idempotency WHERE conv_key = ? AND key = ?`,
			k.ConvKey, k.Key).Scan(&held.BodyHash, &held.RunID, &created)
		held.CreatedAt = time.UnixMicro(created).UTC()
		return err
	})
	if err != nil {
		return core.IdempotencyKey{}, false, fmt.Errorf("sqlite: claim idempotency key in %q: %w", k.ConvKey, err)
	}
	return held, claimed, nil
}

// ReleaseIdempotencyKey forgets key of conversation convKey if it names
// runID; anything else is left alone.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, convKey, key, runID string) error {
	_, err := s.w.exec(ctx, `DELETE FROM api_idempotency WHERE conv_key = ? AND key = ? AND run_id = ?`, convKey, key, runID)
	if err != nil {
		return fmt.Errorf("sqlite: release idempotency key in %q: %w", convKey, err)
	}
	return nil
}
