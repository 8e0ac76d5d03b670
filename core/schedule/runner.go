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
	// Alive, when set, tells whether this replica can show it is alive
	// (DESIGN §16); while it cannot, it fires nothing (a live replica
	// claims the fire instead).
	Alive func() (bool, string)

	loops     sync.WaitGroup // the schedules' loops
	watchers  sync.WaitGroup // the fires being watched
	stopOnce  sync.Once
	stop      chan struct{} // closed by Stop
	closeOnce sync.Once
	mu        sync.Mutex
	finished  bool // Stop's runsFinished
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
	r.stopOnce.Do(func() { r.stop = make(chan struct{}) })
}

// Run fires every schedule until ctx ends. The fires it started are
// watched until their runs end or Stop.
func (r *Runner) Run(ctx context.Context) error {
	r.defaults()
	for _, s := range r.Schedules {
		r.loops.Add(1)
		go func() {
			defer r.loops.Done()
			r.loop(ctx, s)
		}()
	}
	<-ctx.Done()
	r.loops.Wait()
	return nil
}

// Stop records the fires still watched, once the engine has shut down
// (a graceful shutdown, DESIGN §16): done when their run is over and
// runsFinished (the engine's runs all ended, none was cut short),
// interrupted otherwise. It returns when they are recorded or ctx ends.
func (r *Runner) Stop(ctx context.Context, runsFinished bool) {
	r.defaults()
	r.mu.Lock()
	r.finished = runsFinished
	r.mu.Unlock()
	r.closeOnce.Do(func() { close(r.stop) })
	done := make(chan struct{})
	go func() { r.watchers.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
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
	if r.Alive != nil {
		if ok, why := r.Alive(); !ok {
			log.Warn("schedule: not firing: this replica cannot show it is alive (a live one fires it)", "why", why)
			return
		}
	}
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
	r.watchers.Add(1)
	go func() {
		defer r.watchers.Done()
		r.watch(context.WithoutCancel(ctx), s, at, conv)
	}()
}

// watch records the fire done once its conversation is idle. The end of
// the schedules' context does not stop it (the engine lets runs finish
// after it); Stop or the end of ctx does, and records the fire as Stop
// says.
func (r *Runner) watch(ctx context.Context, s Schedule, at time.Time, conv string) {
	t := time.NewTicker(r.Poll)
	defer t.Stop()
	for r.Target.Busy(ctx, conv) {
		select {
		case <-ctx.Done():
			r.finish(s, at, conv, core.FireInterrupted)
			return
		case <-r.stop:
			r.mu.Lock()
			finished := r.finished
			r.mu.Unlock()
			bctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			busy := r.Target.Busy(bctx, conv)
			cancel()
			outcome := core.FireInterrupted
			if finished && !busy {
				outcome = core.FireDone
			}
			r.finish(s, at, conv, outcome)
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
		return "", fmt.Errorf("schedule %s: skipped: the previous run is still going%s", s.Name, r.blocker(ctx, s, at))
	}
	conv, err := r.Target.Start(ctx, s, at)
	if err != nil {
		r.finish(s, at, conv, core.FireFailed)
		return conv, err
	}
	r.watchers.Add(1)
	r.watch(ctx, s, at, conv)
	r.watchers.Done()
	if ctx.Err() != nil {
		return conv, ctx.Err()
	}
	return conv, nil
}

// blocker names the running fire that made the fire at at skip, as
// " (fire of 09:00:00 UTC on replica X)".
func (r *Runner) blocker(ctx context.Context, s Schedule, at time.Time) string {
	fires, err := r.Ledger.Fires(ctx, s.Name, 10)
	if err != nil {
		return ""
	}
	for _, f := range fires {
		if f.At.Before(at) && f.Outcome == core.FireRunning {
			return fmt.Sprintf(" (the fire of %s, on replica %s)", f.At.UTC().Format(time.RFC3339), f.By)
		}
	}
	return ""
}
