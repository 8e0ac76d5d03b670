package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/core"
)

var _ core.FireLedger = (*Store)(nil)

// ClaimFire records fire f once; see core.FireLedger. BEGIN IMMEDIATE
// serialises claims, also between processes.
func (s *Store) ClaimFire(ctx context.Context, f core.Fire, busySince time.Time) (won, skipped bool, err error) {
	err = s.inTx(ctx, func(tx *txn) error {
		won, skipped = false, false
		var n int
		if err := tx.queryRow(ctx, `SELECT count(*) FROM schedule_fires WHERE name = ? AND fire_at = ?`,
			f.Name, f.At.UnixMicro()).Scan(&n); err != nil || n > 0 {
			return err
		}
		var outcome, by string
		var claimed int64
		err := tx.queryRow(ctx, `SELECT outcome, claimed_at, claimed_by FROM schedule_fires WHERE name = ? AND fire_at < ? AND outcome <> 'skipped'
			ORDER BY fire_at DESC LIMIT 1`, f.Name, f.At.UnixMicro()).Scan(&outcome, &claimed, &by)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		// A running fire blocks only while its process lives (DESIGN §16):
		// it holds the lease replica:<by> until it exits, even by kill -9.
		skipped = err == nil && outcome == core.FireRunning && claimed >= busySince.UnixMicro() && s.leaseHeld("replica:"+by)
		out := core.FireRunning
		var finished sql.NullInt64
		if skipped {
			out, finished = core.FireSkipped, micros(time.Now())
		}
		_, err = tx.exec(ctx, `INSERT INTO schedule_fires (name, fire_at, claimed_by, claimed_at, outcome, finished_at)
			VALUES (?, ?, ?, ?, ?, ?)`, f.Name, f.At.UnixMicro(), f.By, time.Now().UnixMicro(), out, finished)
		won = err == nil
		return err
	})
	if err != nil {
		return false, false, fmt.Errorf("sqlite: claim fire %s at %s: %w", f.Name, f.At.Format(time.RFC3339), err)
	}
	return won, skipped, nil
}

// FinishFire records how a claimed fire ended.
func (s *Store) FinishFire(ctx context.Context, name string, at time.Time, convKey, outcome string) error {
	_, err := s.w.exec(ctx, `UPDATE schedule_fires SET conv_key = ?, outcome = ?, finished_at = ?
		WHERE name = ? AND fire_at = ?`, convKey, outcome, time.Now().UnixMicro(), name, at.UnixMicro())
	if err != nil {
		return fmt.Errorf("sqlite: finish fire %s at %s: %w", name, at.Format(time.RFC3339), err)
	}
	return nil
}

// Fires returns the fires of a schedule, the latest first.
func (s *Store) Fires(ctx context.Context, name string, limit int) ([]core.Fire, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.query(ctx, `SELECT name, fire_at, claimed_by, claimed_at, conv_key, outcome, finished_at
		FROM schedule_fires WHERE name = ? ORDER BY fire_at DESC LIMIT ?`, name, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: fires of %s: %w", name, err)
	}
	defer rows.Close()
	var out []core.Fire
	for rows.Next() {
		var f core.Fire
		var at, claimed int64
		var finished sql.NullInt64
		if err := rows.Scan(&f.Name, &at, &f.By, &claimed, &f.ConvKey, &f.Outcome, &finished); err != nil {
			return nil, fmt.Errorf("sqlite: fires of %s: %w", name, err)
		}
		f.At, f.ClaimedAt, f.FinishedAt = time.UnixMicro(at).UTC(), time.UnixMicro(claimed).UTC(), fromMicros(finished)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: fires of %s: %w", name, err)
	}
	return out, nil
}
