package core

import (
	"context"
	"time"
)

// FireLedger records the fires of schedules (DESIGN §13) so that each fire
// runs exactly once across every process sharing the store. Both stores
// implement it; it is not part of Store because the engine never needs it.
type FireLedger interface {
	// ClaimFire records fire f (Name, At, By) if no process did before:
	// won is false when the fire was claimed already, by anyone. A won
	// fire is recorded as skipped (skipped=true, Outcome FireSkipped) when
	// the latest earlier fire of the schedule is still running, was
	// claimed after busySince and its process is alive (DESIGN §16: it
	// holds the lease "replica:<By>", or with replicas has not let its
	// holds lapse): the caller must not run it, only say so. A fire of a
	// process that is gone blocks nothing.
	ClaimFire(ctx context.Context, f Fire, busySince time.Time) (won, skipped bool, err error)
	// FinishFire records how a claimed fire ended and the conversation it
	// ran in.
	FinishFire(ctx context.Context, name string, at time.Time, convKey, outcome string) error
	// Fires returns the recorded fires of a schedule, the latest first, at
	// most limit (0: all).
	Fires(ctx context.Context, name string, limit int) ([]Fire, error)
}

// Fire is one fire of a schedule.
type Fire struct {
	Name       string
	At         time.Time // the fire time the schedule computed
	By         string    // the process (replica) that claimed it
	ClaimedAt  time.Time
	ConvKey    string
	Outcome    string // FireRunning, FireDone, FireSkipped, FireFailed, FireInterrupted
	FinishedAt time.Time
}

// Fire outcomes.
const (
	FireRunning = "running"
	FireDone    = "done"
	FireSkipped = "skipped"
	FireFailed  = "failed"
	// FireInterrupted: its process shut down before the run ended.
	FireInterrupted = "interrupted"
)

// Leaser hands out named leases, each held by at most one process at a
// time: the Telegram poller and the Discord gateway run only where their
// lease is held (DESIGN §12). A lease ends when its holder releases it or
// dies (even by kill -9); the stores tie it to something the operating
// system or the database server frees with the process. Both stores
// implement it.
type Leaser interface {
	// TryLease takes the lease name if nobody holds it; ok is false when
	// another process does.
	TryLease(ctx context.Context, name string) (l Lease, ok bool, err error)
}

// Lease is a held lease.
type Lease interface {
	// Lost is closed when the lease can no longer be vouched for (the
	// connection that holds it broke): stop what it guards.
	Lost() <-chan struct{}
	// Release gives the lease up.
	Release()
}
