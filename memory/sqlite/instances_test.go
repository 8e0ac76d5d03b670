package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// helperEnv, when set to a database path, makes the test binary act as a
// second opsgate process for TestTwoProcessesOneFile.
const helperEnv = "OPSGATE_SQLITE_HELPER_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		os.Exit(helper(path))
	}
	os.Exit(m.Run())
}

const (
	rivalConv = "slack:T1:C1:1.2"
	rivalOps  = 40
)

// rival races for every one-shot operation of the fixture made by
// prepareRivalry, in order, and reports what it won to report.
func rival(ctx context.Context, s core.Store, who string, report func(op string, i int)) error {
	for i := range rivalOps {
		if _, err := s.ClaimCheckpoint(ctx, fmt.Sprintf("run-%d", i)); err == nil {
			report("claim", i)
		} else if !errors.Is(err, core.ErrNotFound) {
			return err
		}
		if first, err := s.SaveInbound(ctx, core.Inbound{ConvKey: rivalConv, MessageID: fmt.Sprintf("m-%d", i), Text: who}); err != nil {
			return err
		} else if first {
			report("inbound", i)
		}
		o := core.ApprovalOutcome{Status: core.ApprovalApproved, DecidedBy: core.Actor{ID: who}, DecidedAt: time.Now()}
		if _, err := s.DecideApproval(ctx, fmt.Sprintf("a-%d", i), o); err == nil {
			report("decide", i)
		} else if !errors.Is(err, core.ErrAlreadyDecided) {
			return err
		}
	}
	return nil
}

// prepareRivalry stores what rival races for.
func prepareRivalry(t *testing.T, s core.Store) {
	for i := range rivalOps {
		run := fmt.Sprintf("run-%d", i)
		if err := s.Apply(t.Context(), core.Batch{Checkpoint: &core.Checkpoint{RunID: run, ConvKey: rivalConv, CreatedAt: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		a := core.Approval{ID: fmt.Sprintf("a-%d", i), RunID: run, ConvKey: rivalConv, Status: core.ApprovalPending,
			CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
		if err := s.Apply(t.Context(), core.Batch{Approvals: []core.Approval{a}}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRivalry checks that each operation was won exactly once, and that
// the stored decision is the winner's.
func checkRivalry(t *testing.T, s core.Store, wins map[string]map[int]string) {
	t.Helper()
	for _, op := range []string{"claim", "inbound", "decide"} {
		for i := range rivalOps {
			if _, ok := wins[op][i]; !ok {
				t.Errorf("%s %d: nobody won, want exactly one", op, i)
			}
		}
	}
	for i, who := range wins["decide"] {
		a, err := s.Approval(t.Context(), fmt.Sprintf("a-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if a.DecidedBy.ID != who {
			t.Errorf("approval a-%d decided by %q, but %q won", i, a.DecidedBy.ID, who)
		}
	}
}

// winners records who won what, failing the test on a second winner.
type winners struct {
	t    *testing.T
	mu   sync.Mutex
	wins map[string]map[int]string
}

func (w *winners) report(who string) func(op string, i int) {
	return func(op string, i int) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.wins == nil {
			w.wins = map[string]map[int]string{}
		}
		if w.wins[op] == nil {
			w.wins[op] = map[int]string{}
		}
		if prev, ok := w.wins[op][i]; ok {
			w.t.Errorf("%s %d won by both %s and %s", op, i, prev, who)
		}
		w.wins[op][i] = who
	}
}

func TestTwoStoresOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "opsgate.db")

	// Both open a new file at once: each migration is applied once.
	var a, b *sqlite.Store
	var errA, errB error
	var wg sync.WaitGroup
	wg.Go(func() { a, errA = sqlite.Open(ctx, path) })
	wg.Go(func() { b, errB = sqlite.Open(ctx, path) })
	wg.Wait()
	if err := errors.Join(errA, errB); err != nil {
		t.Fatalf("Open twice at once: %v", err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })

	// One decides, the other sees it.
	appr := core.Approval{ID: "x", RunID: "r", ConvKey: rivalConv, Status: core.ApprovalPending, ExpiresAt: time.Now().Add(time.Hour)}
	if err := a.Apply(ctx, core.Batch{Approvals: []core.Approval{appr}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DecideApproval(ctx, "x", core.ApprovalOutcome{Status: core.ApprovalDenied, DecidedBy: core.Actor{ID: "bob"}, DecidedAt: time.Now()}); err != nil {
		t.Fatalf("DecideApproval through the second store: %v", err)
	}
	got, err := a.Approval(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != core.ApprovalDenied || got.DecidedBy.ID != "bob" {
		t.Errorf("first store sees approval %s by %q, want denied by bob", got.Status, got.DecidedBy.ID)
	}
	if _, err := a.DecideApproval(ctx, "x", core.ApprovalOutcome{Status: core.ApprovalApproved, DecidedAt: time.Now()}); !errors.Is(err, core.ErrAlreadyDecided) {
		t.Errorf("DecideApproval through the first store after the second: err = %v, want ErrAlreadyDecided", err)
	}

	// Both race for everything, from several goroutines each.
	prepareRivalry(t, a)
	w := &winners{t: t}
	for g := range 4 {
		for name, s := range map[string]*sqlite.Store{"a": a, "b": b} {
			who := fmt.Sprintf("%s/%d", name, g)
			wg.Go(func() {
				if err := rival(ctx, s, who, w.report(who)); err != nil {
					t.Errorf("%s: %v", who, err)
				}
			})
		}
	}
	wg.Wait()
	checkRivalry(t, b, w.wins)
}

// TestTwoProcessesOneFile races this process against a second one (this
// test binary again, see TestMain) for the same one-shot operations.
func TestTwoProcessesOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opsgate.db")
	s := open(t, path)
	prepareRivalry(t, s)

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("helper process did not get ready: %q, %v", lines.Text(), lines.Err())
	}

	w := &winners{t: t}
	report := w.report("parent")
	io.WriteString(stdin, "go\n")
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { // the child's wins
		child := w.report("child")
		for lines.Scan() {
			var op string
			var i int
			if _, err := fmt.Sscanf(lines.Text(), "%s %d", &op, &i); err != nil {
				t.Errorf("helper process said %q", lines.Text())
				continue
			}
			child(op, i)
			n.Add(1)
		}
	})
	if err := rival(t.Context(), s, "parent", report); err != nil {
		t.Errorf("parent: %v", err)
	}
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper process: %v", err)
	}
	if n.Load() == 0 {
		t.Log("the helper process won nothing; the race was one-sided this time")
	}
	checkRivalry(t, s, w.wins)
}

// helper is the second process of TestTwoProcessesOneFile: it opens the
// database, says "ready", waits for "go", races, and prints its wins.
func helper(path string) int {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	defer s.Close()
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	err = rival(ctx, s, "child", func(op string, i int) { fmt.Println(op, i) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}
