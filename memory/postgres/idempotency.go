package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

// ClaimIdempotencyKey records k unless conversation k.ConvKey holds k.Key
// from notBefore on; it returns the record that holds the key, and whether
// it is k. Records older than notBefore are forgotten on the way. Of two
// claims at once (on any replicas) the primary key lets one insert; the
// other waits for it and reads its record.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k core.IdempotencyKey, notBefore time.Time) (held core.IdempotencyKey, claimed bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		claimed = false
		if _, err := tx.Exec(ctx, `DELETE FROM api_idempotency WHERE created_at < $1`, notBefore); err != nil {
			return err
		}
		// A record the winner released between our insert and our read
		// is gone: the key is free again, so try once more.
		for range 3 {
			tag, err := tx.Exec(ctx, `INSERT INTO api_idempotency (conv_key, key, body_hash, run_id, created_at)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT (conv_key, key) DO NOTHING`,
				k.ConvKey, k.Key, k.BodyHash, k.RunID, k.CreatedAt)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				held, claimed = k, true
				return nil
			}
			held = core.IdempotencyKey{ConvKey: k.ConvKey, Key: k.Key}
			err = tx.QueryRow(ctx, `SELECT body_hash, run_id, created_at FROM api_idempotency WHERE conv_key = $1 AND key = $2`,
				k.ConvKey, k.Key).Scan(&held.BodyHash, &held.RunID, &held.CreatedAt)
			if !errors.Is(err, pgx.ErrNoRows) {
				held.CreatedAt = held.CreatedAt.UTC()
				return err
			}
		}
		return errors.New("the key was claimed and released again and again")
	})
	if err != nil {
		return core.IdempotencyKey{}, false, fmt.Errorf("postgres: claim idempotency key in %q: %w", k.ConvKey, err)
	}
	return held, claimed, nil
}

// ReleaseIdempotencyKey forgets key of conversation convKey if it names
// runID; anything else is left alone.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, convKey, key, runID string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM api_idempotency WHERE conv_key = $1 AND key = $2 AND run_id = $3`, convKey, key, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: release idempotency key in %q: %w", convKey, err)
	}
	return nil
}
