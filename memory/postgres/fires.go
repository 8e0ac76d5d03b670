package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

var _ core.FireLedger = (*Store)(nil)

// ClaimFire records fire f once across replicas; see core.FireLedger. The
// primary key decides between replicas claiming the same fire.
func (s *Store) ClaimFire(ctx context.Context, f core.Fire, busySince time.Time) (won, skipped bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		won, skipped = false, false
		// One claim per schedule at a time: the overlap check below must see
		// the previous fire's latest state.
		if err := lock(ctx, tx, "fire:"+f.Name); err != nil {
			return err
		}
		var outcome string
		var claimed time.Time
		var alive bool
		// A running fire blocks only while its replica is alive (DESIGN
		// §16): it holds its liveness lock, or has holds that have not
		// lapsed (it may be re-taking its lock after an outage).
		err := tx.QueryRow(ctx, `SELECT outcome, claimed_at, `+fireReplicaAlive+` FROM schedule_fires f
			WHERE name = $1 AND fire_at < $2 AND outcome <> 'skipped'
			ORDER BY fire_at DESC LIMIT 1`, f.Name, f.At).Scan(&outcome, &claimed, &alive)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		skipped = err == nil && outcome == core.FireRunning && !claimed.Before(busySince) && alive
		out := core.FireRunning
		var finished any
		if skipped {
			out, finished = core.FireSkipped, time.Now()
		}
		tag, err := tx.Exec(ctx, `INSERT INTO schedule_fires (name, fire_at, claimed_by, claimed_at, outcome, finished_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name, fire_at) DO NOTHING`,
			f.Name, f.At, f.By, time.Now(), out, finished)
		if err != nil {
			return err
		}
		won = tag.RowsAffected() == 1
		skipped = won && skipped
		return nil
	})
	if err != nil {
		return false, false, fmt.Errorf("postgres: claim fire %s at %s: %w", f.Name, f.At.Format(time.RFC3339), err)
	}
	return won, skipped, nil
}

// fireReplicaAlive is true while the replica that claimed fire f is alive:
// its liveness lock (the one holderAlive looks for) is held, or it holds a
// conversation whose hold has not lapsed.
const fireReplicaAlive = `(EXISTS (SELECT 1 FROM pg_locks l
	WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('opsgate:lease:replica:' || f.claimed_by, 0))
	OR EXISTS (SELECT 1 FROM conv_holders h WHERE h.holder = f.claimed_by AND h.expires_at > now()))`

// FinishFire records how a claimed fire ended.
func (s *Store) FinishFire(ctx context.Context, name string, at time.Time, convKey, outcome string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE schedule_fires SET conv_key = $1, outcome = $2, finished_at = $3
			WHERE name = $4 AND fire_at = $5`, convKey, outcome, time.Now(), name, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: finish fire %s at %s: %w", name, at.Format(time.RFC3339), err)
	}
	return nil
}

// Fires returns the fires of a schedule, the latest first.
func (s *Store) Fires(ctx context.Context, name string, limit int) ([]core.Fire, error) {
	var lim any
	if limit > 0 {
		lim = limit
	}
	var out []core.Fire
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT name, fire_at, claimed_by, claimed_at, conv_key, outcome, finished_at
			FROM schedule_fires WHERE name = $1 ORDER BY fire_at DESC LIMIT $2`, name, lim)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.Fire, error) {
			var f core.Fire
			var finished *time.Time
			err := row.Scan(&f.Name, &f.At, &f.By, &f.ClaimedAt, &f.ConvKey, &f.Outcome, &finished)
			f.At, f.ClaimedAt, f.FinishedAt = f.At.UTC(), f.ClaimedAt.UTC(), fromTS(finished)
			return f, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: fires of %s: %w", name, err)
	}
	return out, nil
}
