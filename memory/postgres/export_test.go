package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

// Crash stops c as its process's death would: its lock and heartbeat end,
// its holds stay behind to lapse.
func Crash(c core.Coordinator) {
	k := c.(*Coordinator)
	k.cancel()
	k.done.Wait()
	k.stopLive()
	k.liveDone.Wait()
}

// SetRetry sets how long s's operations wait for an unreachable server.
func SetRetry(s *Store, d time.Duration) { s.retryFor = d }

// SeeEventsTx has f read synchronous_commit inside each AppendEvents
// transaction, after the batch's own settings.
func SeeEventsTx(s *Store, f func(setting string)) {
	s.eventsTxHook = func(b *pgx.Batch) {
		b.Queue(`SHOW synchronous_commit`).QueryRow(func(r pgx.Row) error {
			var v string
			if err := r.Scan(&v); err != nil {
				return err
			}
			f(v)
			return nil
		})
	}
}

// SynchronousCommit reads synchronous_commit on one of s's connections.
func SynchronousCommit(s *Store) (string, error) {
	var v string
	err := s.pool.QueryRow(context.Background(), `SHOW synchronous_commit`).Scan(&v)
	return v, err
}
