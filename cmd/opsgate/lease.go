package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/opsgate/opsgate/core"
)

// leaseRetry is how often a standby tries to take a lease: with the
// holder's death freeing the lease at once, it bounds the takeover time.
const leaseRetry = 2 * time.Second

// leased runs c.run only while this process holds c.lease (docs/design.md §12:
// the Telegram poller and the Discord gateway run on one replica at a
// time). A standby retries every leaseRetry; a lost lease stops the run
// and makes this process a standby again. It returns c.run's error when
// the adapter itself fails (a revoked token), nil when ctx ends.
func leased(ctx context.Context, leaser core.Leaser, c *chat, log *slog.Logger) error {
	log = log.With("lease", c.lease)
	for {
		l, ok, err := leaser.TryLease(ctx, c.lease)
		if err != nil {
			log.Warn("lease: cannot ask the store; retrying", "err", err)
		}
		if !ok {
			if c.standby.CompareAndSwap(false, true) {
				log.Info("lease: held by another replica; standing by")
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(leaseRetry):
				continue
			}
		}
		c.standby.Store(false)
		log.Info("lease: taken; this replica receives " + c.name + "'s updates")
		runCtx, cancel := context.WithCancel(ctx)
		lost := make(chan struct{})
		go func() {
			select {
			case <-l.Lost():
				close(lost)
				cancel()
			case <-runCtx.Done():
			}
		}()
		err = c.run(runCtx)
		cancel()
		l.Release()
		select {
		case <-lost:
			log.Warn("lease: lost (the store connection broke); standing by")
			c.standby.Store(true)
			continue
		default:
		}
		return err
	}
}

// standbyHealth is c's health, or a ready standby's while another replica
// holds its lease.
func standbyHealth(c *chat) func() (bool, string) {
	health := c.health
	return func() (bool, string) {
		if c.standby.Load() {
			return true, "standby: another replica holds the " + c.lease + " lease"
		}
		return health()
	}
}
