package core

import (
	"context"
	"sync/atomic"
)

type session struct{}

type countingInt struct{ atomic.Int64 }

// Handle processes an inbound user message: it is stored first (a
// redelivered MessageID is ignored), then started as a run, queued, or used
// to steer the active run according to the queue mode. "/stop" stops the
// active run instead. Handle returns once the message is durably stored and
// routed; the run proceeds in the background and reports through events.
func (e *Engine) Handle(ctx context.Context, in Inbound) error { return nil }

// Stop cancels the conversation's active run (it ends with status stopped
// within a second), drops queued messages and cancels pending approvals. It
// reports whether there was anything to stop.
func (e *Engine) Stop(ctx context.Context, convKey string) bool { return false }

// Decide applies a decision to an approval request. It returns the approval
// as decided, or: ErrNotFound; ErrNotAllowed (audited); ErrAlreadyDecided
// with the stored approval; ErrExpired (the request is marked expired and
// counts as denied); ErrHashMismatch when d.ActionHash is set and differs.
// When the last pending approval of a paused run is decided, the run resumes
// in the background, in this process.
func (e *Engine) Decide(ctx context.Context, d Decision) (Approval, error) { return Approval{}, nil }

// ExpireApprovals marks pending approvals past their expiry as expired and
// resumes their runs (expiry counts as a denial).
func (e *Engine) ExpireApprovals(ctx context.Context) {}

// Wait blocks until no run is active and every event has been handed to the
// sender, or ctx ends.
func (e *Engine) Wait(ctx context.Context) error { return nil }

// Status describes a conversation for /status.
type Status struct {
	ActiveRun        *Run
	Queued           int
	PendingApprovals []Approval
}

// Status returns the conversation's current state.
func (e *Engine) Status(ctx context.Context, convKey string) (Status, error) { return Status{}, nil }

// SendErrors returns how many event deliveries failed.
func (e *Engine) SendErrors() int64 { return e.sendErrors.Load() }
