package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/opsgate/opsgate/core"
)

// ReplicaName names this process in the fire ledger: host/pid.
func ReplicaName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// HoldReplicaLease takes the lease replica:<name> on store, by which the
// fire ledger tells a live process's fires from a gone one's, and returns
// it (nil when not taken). Without it (the store takes no leases, the
// lease is held under the same name, which only this process can do, or
// the store failed) this process's fires look gone to the others: said,
// not fatal.
func HoldReplicaLease(ctx context.Context, store any, name string, log *slog.Logger) core.Lease {
	leaser, ok := store.(core.Leaser)
	if !ok {
		return nil
	}
	l, ok, err := leaser.TryLease(ctx, "replica:"+name)
	switch {
	case err != nil:
		log.Warn("take this process's liveness lease; its fires will not hold later ones off", "replica", name, "err", err)
	case !ok:
		log.Warn("this process's liveness lease is held under the same name already", "replica", name)
	default:
		return l
	}
	return nil
}

// Waiter is what FireAndWait waits on: the engine, until its runs are over.
type Waiter interface {
	Wait(ctx context.Context) error
}

// FireAndWait fires s now with r, as opsgate schedules run does, and
// waits (at most drain) for the run's last events to reach answers, so
// that the verdict is the last line. The run's error, which answers kept,
// is the error when the fire itself did not fail.
func FireAndWait(ctx context.Context, r *Runner, s Schedule, engine Waiter, answers *Answers, drain time.Duration) (convKey string, err error) {
	convKey, err = r.FireNow(ctx, s)
	wctx, cancel := context.WithTimeout(ctx, drain)
	_ = engine.Wait(wctx)
	cancel()
	if msg := answers.Failed(); err == nil && msg != "" {
		err = errors.New(msg)
	}
	return convKey, err
}
