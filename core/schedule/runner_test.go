package schedule_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/schedule"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// target records fires; its runs end at once.
type target struct {
	mu      sync.Mutex
	started []time.Time
	skipped []time.Time
}

func (t *target) Start(_ context.Context, s schedule.Schedule, at time.Time) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started = append(t.started, at)
	return "schedule:" + s.Name, nil
}
func (t *target) Skipped(_ context.Context, _ schedule.Schedule, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.skipped = append(t.skipped, at)
}
func (t *target) Busy(context.Context, string) bool { return false }

func (t *target) fires() []time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]time.Time(nil), t.started...)
}

// catch_up runs, at start, the latest fire missed within its window, once
// (a second process starting does not run it again); without catch_up a
// missed fire is not run.
func TestCatchUpRunsTheMissedFireOnce(t *testing.T) {
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	spec, err := schedule.Parse("0 9 * * *")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 9, 20, 0, 0, time.UTC) // 20 min after the 09:00 fire
	missed := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	run := func(catchUp time.Duration, name string) *target {
		tg := &target{}
		r := &schedule.Runner{
			Schedules: []schedule.Schedule{{Name: name, Spec: spec, Prompt: "health", Target: "log", CatchUp: catchUp}},
			Ledger:    store, Target: tg, Replica: "test", Now: func() time.Time { return now }, Poll: time.Millisecond,
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r.Run(ctx)
		return tg
	}
	if got := run(30*time.Minute, "daily").fires(); len(got) != 1 || !got[0].Equal(missed) {
		t.Fatalf("with catch_up 30m: fires %v, want the missed %s", got, missed)
	}
	if got := run(30*time.Minute, "daily").fires(); len(got) != 0 {
		t.Fatalf("a second start ran the caught-up fire again: %v", got)
	}
	if got := run(10*time.Minute, "other").fires(); len(got) != 0 {
		t.Fatalf("with catch_up 10m a fire 20 min old ran: %v", got)
	}
	if got := run(0, "never").fires(); len(got) != 0 {
		t.Fatalf("without catch_up a missed fire ran: %v", got)
	}
}

// A replica that cannot show it is alive fires nothing (issue 20): the
// fire is left for a live replica to claim.
func TestNoFireWhileNotAlive(t *testing.T) {
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	spec, err := schedule.Parse("0 9 * * *")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 9, 20, 0, 0, time.UTC) // 20 min after the 09:00 fire
	run := func(alive bool) *target {
		tg := &target{}
		r := &schedule.Runner{
			Schedules: []schedule.Schedule{{Name: "daily", Spec: spec, Prompt: "health", Target: "log", CatchUp: 30 * time.Minute}},
			Ledger:    store, Target: tg, Replica: "test", Now: func() time.Time { return now }, Poll: time.Millisecond,
			Alive: func() (bool, string) { return alive, "the store is down" },
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r.Run(ctx)
		return tg
	}
	if got := run(false).fires(); len(got) != 0 {
		t.Fatalf("a replica that is not alive fired %v", got)
	}
	if got := run(true).fires(); len(got) != 1 {
		t.Fatalf("a live replica after it: fires %v, want the missed one", got)
	}
}

// Stop records a fire still watched: interrupted when its run is still
// going (or the engine cut runs short), done when it ended and every run
// finished; a fire is never left running (issue 20).
func TestStopRecordsWatchedFires(t *testing.T) {
	for _, tc := range []struct {
		busy, finished bool
		want           string
	}{
		{busy: true, finished: false, want: core.FireInterrupted},
		{busy: true, finished: true, want: core.FireInterrupted},
	} {
		store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "opsgate.db"))
		if err != nil {
			t.Fatal(err)
		}
		spec, err := schedule.Parse("0 9 * * *")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 24, 9, 20, 0, 0, time.UTC)
		tg := &busyTarget{busy: tc.busy}
		r := &schedule.Runner{
			Schedules: []schedule.Schedule{{Name: "daily", Spec: spec, Prompt: "health", Target: "log", CatchUp: 30 * time.Minute}},
			Ledger:    store, Target: tg, Replica: "test", Now: func() time.Time { return now }, Poll: time.Millisecond,
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		r.Run(ctx)
		cancel()
		fs, err := store.Fires(t.Context(), "daily", 0)
		if err != nil || len(fs) != 1 || fs[0].Outcome != core.FireRunning {
			t.Fatalf("before Stop: fires %+v, %v; want one running", fs, err)
		}
		r.Stop(t.Context(), tc.finished)
		fs, err = store.Fires(t.Context(), "daily", 0)
		if err != nil || len(fs) != 1 || fs[0].Outcome != tc.want {
			t.Fatalf("busy %v, finished %v: after Stop fires %+v, %v; want %s", tc.busy, tc.finished, fs, err, tc.want)
		}
		store.Close()
	}
}

// busyTarget's runs never end by themselves.
type busyTarget struct {
	target
	busy bool
}

func (b *busyTarget) Busy(context.Context, string) bool { return b.busy }
