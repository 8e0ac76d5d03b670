package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runFigures runs figures at smoke-test sizes and checks that each gives
// its rows, complete. Like TestRunQuick it asserts nothing about the
// numbers.
func runFigures(t *testing.T, want map[string]int) {
	t.Helper()
	var only []string
	for id := range want {
		only = append(only, id)
	}
	var log bytes.Buffer
	r := Run(context.Background(), Options{Quick: true, Only: only}, &log)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %v\nlog:\n%s", r.Errors, log.String())
	}
	got := map[string]int{}
	for _, row := range r.Rows {
		id, _, _ := strings.Cut(row.Figure, ".")
		got[id]++
		if row.Measured == "" || row.Target == "" || (row.Result != Pass && row.Result != Miss && row.Result != Info) {
			t.Errorf("incomplete row %+v", row)
		}
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("figure %s: %d rows, want %d", id, got[id], n)
		}
	}
}

// TestTelegramFiguresQuick runs figures 2 and 3 (in process: engine,
// Telegram adapter, Bot API fake) at smoke-test sizes, in a few seconds
// even under the race detector.
func TestTelegramFiguresQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("streams replies through the Telegram adapter; skipped with -short")
	}
	runFigures(t, map[string]int{"2": 1, "3": 1})
}

// TestProcessFiguresQuick runs figures 4 and 5, which build cmd/opsgate and
// run it as a child process, at smoke-test sizes. It is skipped under the
// race detector: the child is an ordinary build the detector cannot see
// into, so it would check nothing more, and on a cold build cache (CI's
// `make test`, which only builds with -race) compiling the binary takes
// minutes. Run it with `go test -run ProcessFigures ./bench/`.
func TestProcessFiguresQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs opsgate serve; skipped with -short")
	}
	if raceEnabled {
		t.Skip("builds and runs opsgate serve, which the race detector cannot see into; skipped under -race")
	}
	runFigures(t, map[string]int{"4": 10, "5": 2, "9": 2})
}

// TestMemoryFigureQuick runs figure 10 (memory retrieval on SQLite and
// PostgreSQL, memory_prepare, quality on the labelled set) at smoke-test
// sizes. Without PostgreSQL its rows say why they were not measured. It
// is skipped under the race detector, which makes the pure-Go SQLite five
// times slower (over a minute) and has little to watch: the only
// concurrency is each store filled by its own goroutine.
func TestMemoryFigureQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("fills two stores and starts PostgreSQL; skipped with -short")
	}
	if raceEnabled {
		t.Skip("fills stores through the pure-Go SQLite, over a minute under -race; skipped under -race")
	}
	runFigures(t, map[string]int{"10": 6})
}

// TestStreamsFigureQuick runs figure 11 (SSE subscribers of the HTTP API on
// a run, idle streams' memory, figures 2 and 3 with followers) at
// smoke-test sizes.
func TestStreamsFigureQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("streams replies to HTTP API followers and through the Telegram adapter; skipped with -short")
	}
	runFigures(t, map[string]int{"11": 5})
}
