package chats

import (
	"context"
	"log/slog"
	"time"
)

// LeaseRetry is how often a standby tries to take a lease: with the
// holder's death freeing the lease at once, it bounds the takeover time.
const LeaseRetry = 2 * time.Second

// leased runs m's adapter only while this process holds its lease
// (docs/design.md §12: the Telegram poller and the Discord gateway run on
// one replica at a time). A standby retries every LeaseRetry; a lost lease
// stops the run and makes this process a standby again. It returns the
// adapter's error when the adapter itself fails (a revoked token), nil
// when ctx ends.
func (s *Set) leased(ctx context.Context, m *member, lease string, e Engine) error {
	m.lease.Store(&lease)
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("adapter", m.c.Platform(), "lease", lease)
	for {
		l, ok, err := s.Leaser.TryLease(ctx, lease)
		if err != nil {
			log.Warn("lease: cannot ask the store; retrying", "err", err)
		}
		if !ok {
			if m.standby.CompareAndSwap(false, true) {
				log.Info("lease: held by another replica; standing by")
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(LeaseRetry):
				continue
			}
		}
		m.standby.Store(false)
		log.Info("lease: taken; this replica receives " + m.c.Platform() + "'s updates")
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
		err = m.c.Run(runCtx, e)
		cancel()
		l.Release()
		select {
		case <-lost:
			log.Warn("lease: lost (the store connection broke); standing by")
			m.standby.Store(true)
			continue
		default:
		}
		return err
	}
}
