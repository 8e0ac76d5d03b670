package bench

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

// Issue 25, acceptance 1: figure 12 builds a baseline revision from git
// next to HEAD, runs both alternately through the real binary, the
// Telegram path and the scripted model, and gives start-up, message to
// model, first token to first send, idle RSS and CPU per conversation, each
// as both sides' medians and their ratio. Here the baseline is HEAD itself
// at the smallest size; like the other quick figures it asserts nothing
// about the numbers. The children are ordinary builds, so it runs under
// the race detector too (it watches the harness).
func TestSideBySideQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs opsgate serve twice; skipped with -short")
	}
	if err := exec.Command("git", "rev-parse", "HEAD").Run(); err != nil {
		t.Skip("not a git checkout: figure 12 builds its baseline from git")
	}
	var log bytes.Buffer
	r := Run(context.Background(), Options{Only: []string{"12"}, Side: SideOptions{Baseline: "HEAD", Rounds: 1, Starts: 1, Messages: 1}}, &log)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %v\nlog:\n%s", r.Errors, log.String())
	}
	var got []string
	for _, row := range r.Rows {
		name, _ := strings.CutPrefix(row.Figure, "12. side by side: ")
		got = append(got, name)
		if !strings.HasPrefix(row.Measured, "HEAD ") || !strings.Contains(row.Measured, " vs ") || !strings.HasSuffix(row.Measured, "x") {
			t.Errorf("%s: measured %q; want HEAD's median vs the baseline's, and their ratio", row.Figure, row.Measured)
		}
	}
	want := "start-up (exec to first getUpdates), message to model, first token to first send, idle RSS, CPU per conversation"
	if strings.Join(got, ", ") != want {
		t.Errorf("figure 12's rows: %q; want %q", strings.Join(got, ", "), want)
	}
}
