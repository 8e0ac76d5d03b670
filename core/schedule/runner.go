// Package schedule runs configured prompts on cron schedules (DESIGN §13).
// Fire times come from the spec alone, so every replica computes the same
// ones; a fire runs where it is claimed first in the store's ledger
// (core.FireLedger), so exactly once across replicas. robfig/cron v3
// parses the specs; the loop that waits for fire times is this package's,
// because cron's scheduler counts @every from each process's start and
// has no notion of a fire claimed elsewhere.
package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Schedule is one configured schedule.
type Schedule struct {
	Name   string
	Spec   Spec
	Prompt string
	Target string
	// CatchUp: at start, a fire missed by at most this much runs now.
	CatchUp time.Duration
}

// Target is where fires run: it starts a run and reports when it is over.
type Target interface {
	// Start posts what announces the fire in s.Target and starts its run;
	// it returns the conversation the run is in.
	Start(ctx context.Context, s Schedule, at time.Time) (convKey string, err error)
	// Skipped says in s.Target that the fire at at did not run because the
	// previous one is still going.
	Skipped(ctx context.Context, s Schedule, at time.Time)
	// Busy reports whether the conversation still has a run going or
	// waiting for approval.
	Busy(ctx context.Context, convKey string) bool
}

// Runner fires schedules.
type Runner struct {
	Schedules []Schedule
	Ledger    core.FireLedger
	Target    Target
	// Replica names this process in the ledger.
	Replica string
	Log     *slog.Logger
	// StaleAfter: a fire still marked running after this long no longer
	// makes later fires skip (its process is presumed dead). Default 1h.
	StaleAfter time.Duration
	// Poll is how often a fire's run is checked for its end (default 1s).
	Poll time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	wg sync.WaitGroup
}

func (r *Runner) defaults() {
	if r.StaleAfter <= 0 {
		r.StaleAfter = time.Hour
	}
	if r.Poll <= 0 {
		r.Poll = time.Second
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
}

// Run fires every schedule until ctx ends, then waits for the fires it
// started to be recorded.
func (r *Runner) Run(ctx context.Context) error {
	r.defaults()
	for _, s := range r.Schedules {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.loop(ctx, s)
		}()
	}
	<-ctx.Done()
	r.wg.Wait()
	return nil
}

func (r *Runner) loop(ctx context.Context, s Schedule) {
	now := r.Now()
	if s.CatchUp > 0 {
		// The latest fire time within the catch-up window, if any was
		// missed (a claimed one is not run again).
		var missed time.Time
		for t := s.Spec.Next(now.Add(-s.CatchUp)); !t.IsZero() && !t.After(now); t = s.Spec.Next(t) {
			missed = t
		}
		if !missed.IsZero() {
			r.fire(ctx, s, missed)
		}
	}
	for {
		next := s.Spec.Next(r.Now())
		if next.IsZero() {
			return
		}
		timer := time.NewTimer(next.Sub(r.Now())) // on the runner's clock, as next is
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		r.fire(ctx, s, next)
	}
}

// Fire runs the fire of s at at where it is claimed first; a fire claimed
// before (here or elsewhere) is left alone. It returns once the run has
// started (or was skipped); the run is watched in the background.
func (r *Runner) fire(ctx context.Context, s Schedule, at time.Time) {
	r.defaults()
	log := r.Log.With("schedule", s.Name, "fire", at.UTC().Format(time.RFC3339))
	won, skipped, err := r.Ledger.ClaimFire(ctx, core.Fire{Name: s.Name, At: at, By: r.Replica}, r.Now().Add(-r.StaleAfter))
	switch {
	case err != nil:
		log.Error("schedule: claim the fire", "err", err)
		return
	case !won:
		log.Debug("schedule: fire claimed by another replica")
		return
	case skipped:
		log.Warn("schedule: fire skipped: the previous run is still going")
		r.Target.Skipped(ctx, s, at)
		return
	}
	log.Info("schedule: fire")
	conv, err := r.Target.Start(ctx, s, at)
	if err != nil {
		log.Error("schedule: start the run", "err", err)
		r.finish(s, at, conv, core.FireFailed)
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.watch(ctx, s, at, conv)
	}()
}

// watch records the fire done once its conversation is idle. When ctx ends
// first (shutdown), the fire stays running: its run is checkpointed or
// recovered elsewhere, and StaleAfter bounds how long it holds off later
// fires.
func (r *Runner) watch(ctx context.Context, s Schedule, at time.Time, conv string) {
	t := time.NewTicker(r.Poll)
	defer t.Stop()
	for r.Target.Busy(ctx, conv) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	r.finish(s, at, conv, core.FireDone)
}

func (r *Runner) finish(s Schedule, at time.Time, conv, outcome string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Ledger.FinishFire(ctx, s.Name, at, conv, outcome); err != nil {
		r.Log.Error("schedule: record the fire", "schedule", s.Name, "err", err)
	}
}

// FireNow fires s now (`opsgate schedules run`): the fire time is now, to
// the second, so it never collides with a scheduled fire's row. It waits
// until the run is over and returns its conversation.
func (r *Runner) FireNow(ctx context.Context, s Schedule) (convKey string, err error) {
	r.defaults()
	at := r.Now().Truncate(time.Second)
	won, skipped, err := r.Ledger.ClaimFire(ctx, core.Fire{Name: s.Name, At: at, By: r.Replica}, r.Now().Add(-r.StaleAfter))
	switch {
	case err != nil:
		return "", err
	case !won:
		return "", fmt.Errorf("schedule %s: the fire at %s was claimed already; try again in a second", s.Name, at.Format(time.RFC3339))
	case skipped:
		r.Target.Skipped(ctx, s, at)
		return "", fmt.Errorf("schedule %s: skipped: the previous run is still going", s.Name)
	}
	conv, err := r.Target.Start(ctx, s, at)
	if err != nil {
		r.finish(s, at, conv, core.FireFailed)
		return conv, err
	}
	r.watch(ctx, s, at, conv)
	if ctx.Err() != nil {
		return conv, ctx.Err()
	}
	return conv, nil
}
