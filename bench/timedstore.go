package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/opsgate/opsgate/core"
)

// timedStore wraps a core.Store and adds up the wall time spent in it and
// the number of write transactions, so a figure can say how much of the
// engine's time is the store's. The bookkeeping costs two clock reads per
// call, nothing next to a SQLite transaction.
type timedStore struct {
	core.Store
	ns     atomic.Int64
	writes atomic.Int64
}

func (s *timedStore) done(start time.Time, write bool) {
	s.ns.Add(int64(time.Since(start)))
	if write {
		s.writes.Add(1)
	}
}

// take returns and resets the counters.
func (s *timedStore) take() (time.Duration, int64) {
	return time.Duration(s.ns.Swap(0)), s.writes.Swap(0)
}

func (s *timedStore) SaveInbound(ctx context.Context, in core.Inbound) (bool, error) {
	defer s.done(time.Now(), true)
	return s.Store.SaveInbound(ctx, in)
}

func (s *timedStore) PendingInbound(ctx context.Context) ([]core.Inbound, error) {
	defer s.done(time.Now(), false)
	return s.Store.PendingInbound(ctx)
}

func (s *timedStore) Conversation(ctx context.Context, key string) (core.Conversation, error) {
	defer s.done(time.Now(), false)
	return s.Store.Conversation(ctx, key)
}

func (s *timedStore) Messages(ctx context.Context, key string) ([]core.Message, error) {
	defer s.done(time.Now(), false)
	return s.Store.Messages(ctx, key)
}

func (s *timedStore) Run(ctx context.Context, id string) (core.Run, error) {
	defer s.done(time.Now(), false)
	return s.Store.Run(ctx, id)
}

func (s *timedStore) Checkpoint(ctx context.Context, runID string) (core.Checkpoint, error) {
	defer s.done(time.Now(), false)
	return s.Store.Checkpoint(ctx, runID)
}

func (s *timedStore) ClaimCheckpoint(ctx context.Context, runID string) (core.Checkpoint, error) {
	defer s.done(time.Now(), true)
	return s.Store.ClaimCheckpoint(ctx, runID)
}

func (s *timedStore) Checkpoints(ctx context.Context, convKey string) ([]core.Checkpoint, error) {
	defer s.done(time.Now(), false)
	return s.Store.Checkpoints(ctx, convKey)
}

func (s *timedStore) Approval(ctx context.Context, id string) (core.Approval, error) {
	defer s.done(time.Now(), false)
	return s.Store.Approval(ctx, id)
}

func (s *timedStore) Approvals(ctx context.Context, runID string) ([]core.Approval, error) {
	defer s.done(time.Now(), false)
	return s.Store.Approvals(ctx, runID)
}

func (s *timedStore) DecideApproval(ctx context.Context, id string, d core.ApprovalOutcome) (core.Approval, error) {
	defer s.done(time.Now(), true)
	return s.Store.DecideApproval(ctx, id, d)
}

func (s *timedStore) ExpiredApprovals(ctx context.Context, now time.Time) ([]core.Approval, error) {
	defer s.done(time.Now(), false)
	return s.Store.ExpiredApprovals(ctx, now)
}

func (s *timedStore) Audit(ctx context.Context, f core.AuditFilter) ([]core.AuditEntry, error) {
	defer s.done(time.Now(), false)
	return s.Store.Audit(ctx, f)
}

func (s *timedStore) Apply(ctx context.Context, b core.Batch) error {
	defer s.done(time.Now(), !b.Empty())
	return s.Store.Apply(ctx, b)
}
