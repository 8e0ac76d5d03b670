package bench

import (
	"bytes"
	"context"
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
		got[row.Figure[:1]]++
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
	runFigures(t, map[string]int{"4": 10, "5": 2, "9": 1})
}
