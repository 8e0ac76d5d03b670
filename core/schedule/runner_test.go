package schedule_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

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
