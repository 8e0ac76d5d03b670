package postgres_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/postgres"
)

// These tests restart PostgreSQL, each on a server of its own (issue 20,
// DESIGN §16).

// ownCluster starts a PostgreSQL server for t alone; durable for a test
// that stops it as a crash would.
func ownCluster(t *testing.T, durable bool) *pgtest.Cluster {
	t.Helper()
	pgtest.Server(t) // skips (or fails under CI) without PostgreSQL
	start := pgtest.Start
	if durable {
		start = pgtest.StartDurable
	}
	c, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// liveness is what a coordinator tells of this replica's liveness.
type liveness interface{ Alive() (bool, string) }

func alive(t *testing.T, c core.Coordinator) bool {
	t.Helper()
	l, ok := c.(liveness)
	if !ok {
		t.Fatalf("%T does not tell its liveness (Alive)", c)
		return false
	}
	ok, _ = l.Alive()
	return ok
}

func waitAlive(t *testing.T, c core.Coordinator, want bool, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for alive(t, c) != want {
		if time.Now().After(deadline) {
			_, why := c.(liveness).Alive()
			t.Fatalf("Alive stayed %v for %s (%s)", !want, within, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// After a PostgreSQL restart each replica re-takes its liveness lock, says
// it is not alive while the server is down, and never claims a
// conversation of another live replica: not in the window where both
// locks are gone, nor after its hold has lapsed.
// Both a fast and an immediate (crash-like) restart.
func TestLivenessRetakenAfterPostgresRestart(t *testing.T) {
	t.Run("fast", func(t *testing.T) { testLivenessRetaken(t, false) })
	t.Run("immediate", func(t *testing.T) { testLivenessRetaken(t, true) })
}

func testLivenessRetaken(t *testing.T, immediate bool) {
	cluster := ownCluster(t, immediate)
	stop := cluster.Stop
	if immediate {
		stop = cluster.StopImmediate
	}
	url := cluster.URL("postgres")
	a, b := open(t, url), open(t, url)
	log := slog.New(slog.DiscardHandler)
	ca, closeA := a.Coordinator("replica-a", log)
	defer closeA()
	cb, closeB := b.Coordinator("replica-b", log)
	defer closeB()
	ctx := t.Context()
	if held, err := ca.Claim(ctx, "conv-1"); err != nil || !held {
		t.Fatalf("a's Claim = %v, %v", held, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	waitAlive(t, ca, false, 10*time.Second)
	waitAlive(t, cb, false, 10*time.Second)
	if held, err := ca.Claim(ctx, "conv-2"); err == nil {
		t.Fatalf("a's Claim while it cannot show it is alive = %v, nil; want an error", held)
	}
	time.Sleep(3 * time.Second)
	if err := cluster.Restart(); err != nil {
		t.Fatal(err)
	}
	waitAlive(t, ca, true, 15*time.Second)
	waitAlive(t, cb, true, 15*time.Second)
	// Past b's grace and a's hold: b must still see a alive.
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		held, err := cb.Claim(ctx, "conv-1")
		if err == nil && held {
			t.Fatal("b claimed a's conversation after the restart although a is alive")
		}
	}
	if held, err := ca.Claim(ctx, "conv-1"); err != nil || !held {
		t.Fatalf("a's Claim of its own conversation after the restart = %v, %v", held, err)
	}
}

// A replica that dies (its lock and heartbeat gone, its holds left
// behind) has its conversations taken once its hold lapses.
func TestClaimFromADeadHolderOnceItsHoldLapses(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, url), open(t, url)
	log := slog.New(slog.DiscardHandler)
	ca, closeA := a.Coordinator("replica-a", log)
	defer closeA()
	cb, closeB := b.Coordinator("replica-b", log)
	defer closeB()
	ctx := t.Context()
	if held, err := ca.Claim(ctx, "conv-1"); err != nil || !held {
		t.Fatalf("a's Claim = %v, %v", held, err)
	}
	if held, err := cb.Claim(ctx, "conv-1"); err != nil || held {
		t.Fatalf("b's Claim while a lives = %v, %v; want not held", held, err)
	}
	if delivered, err := cb.Signal(ctx, core.Signal{Kind: core.SignalInbound, ConvKey: "conv-1"}); err != nil || !delivered {
		t.Fatalf("b's Signal to a living holder = %v, %v; want delivered", delivered, err)
	}
	postgres.Crash(ca)
	deadline := time.Now().Add(40 * time.Second) // b's grace and a's hold: 15 s each
	for {
		held, err := cb.Claim(ctx, "conv-1")
		if err != nil {
			t.Fatal(err)
		}
		if held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b could not claim a dead replica's conversation within 40 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A session of this replica that the server still holds (its path went
// silent: it says nothing) does not keep the replica from re-taking its
// lock.
func TestLivenessRetakenFromAStaleSession(t *testing.T) {
	url := pgtest.DB(t)
	a := open(t, url)
	stale, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close(context.Background())
	if _, err := stale.Exec(t.Context(), `SELECT pg_advisory_lock(hashtextextended('opsgate:lease:replica:replica-a', 0))`); err != nil {
		t.Fatal(err)
	}
	ca, closeA := a.Coordinator("replica-a", slog.New(slog.DiscardHandler))
	defer closeA()
	waitAlive(t, ca, true, 30*time.Second)
	if err := stale.Ping(t.Context()); err == nil {
		t.Fatal("the stale session still answers")
	}
}

// Engines: a run in flight on replica a across a PostgreSQL restart is
// answered once, by a; replica b never takes it up (issue 20: b used to
// take it up, then a took up b's, in a loop).
func TestNoTakeUpOfALiveReplicasRunAfterPostgresRestart(t *testing.T) {
	cluster := ownCluster(t, false)
	url := cluster.URL("postgres")
	stack := enginetest.New(t)
	hold := make(chan struct{})
	stack.LLM.Push(llmfake.Reply{Text: "The cluster is healthy.", Hold: hold})
	engine := func(name string, rec *coretest.Recorder) (*core.Engine, core.Coordinator) {
		s := open(t, url)
		c, closeC := s.Coordinator(name, coretest.Logger(t).With("replica", name))
		d := stack.Deps(t, rec)
		d.Store, d.Coordinator = s, c
		d.Logger = coretest.Logger(t).With("replica", name)
		e := enginetest.Engine(t, enginetest.Config(), d)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { e.Run(ctx); close(done) }()
		t.Cleanup(func() {
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			_ = e.Shutdown(sctx)
			cancel()
			<-done
			closeC()
		})
		return e, c
	}
	recA, recB := coretest.NewRecorder(), coretest.NewRecorder()
	ea, ca := engine("replica-a", recA)
	_, cb := engine("replica-b", recB)
	in := core.Inbound{ConvKey: "api:c1", MessageID: "m1", User: core.Actor{ID: "alice", Name: "alice"}, Text: "check the cluster", Time: time.Now()}
	if err := ea.Handle(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the model request", func() bool { return len(stack.LLM.Requests()) == 1 })
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := cluster.Restart(); err != nil {
		t.Fatal(err)
	}
	// Both re-take their locks; b's grace (15 s) and a's hold (15 s) pass;
	// b's sweeps run every 3 s.
	time.Sleep(25 * time.Second)
	if !alive(t, ca) || !alive(t, cb) {
		t.Error("a replica has not re-taken its liveness 25 s after the restart")
	}
	close(hold)
	recA.WaitCompleted(t, 1)
	time.Sleep(5 * time.Second) // b's sweeps after the end
	if n := len(stack.LLM.Requests()); n != 1 {
		t.Errorf("the model was called %d times; want once", n)
	}
	for _, ev := range recB.Events() {
		if ev.ConvKey == in.ConvKey {
			t.Errorf("b emitted %s for a's conversation: %q", ev.Type, ev.Text)
		}
	}
	var answers int
	for _, ev := range recA.Events() {
		if ev.Type == core.EventGenerationComplete && strings.Contains(ev.Text, "healthy") {
			answers++
		}
	}
	if answers != 1 {
		t.Errorf("a answered %d times; want once", answers)
	}
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A run on a single replica whose end the store refused (it stayed down
// past its retries) is not taken up again as interrupted when the store
// returns: its end is recorded, the model is not called again and no
// retry note is sent (before, the replica re-ran its own finished run).
func TestRunEndedDuringAnOutageIsNotRunAgain(t *testing.T) {
	cluster := ownCluster(t, false)
	url := cluster.URL("postgres")
	stack := enginetest.New(t)
	stack.LLM.Push(llmfake.Reply{Text: "Checked during the outage.", FirstTokenDelay: 3 * time.Second})
	s := open(t, url)
	postgres.SetRetry(s, time.Second)
	c, closeC := s.Coordinator("replica-a", coretest.Logger(t))
	rec := coretest.NewRecorder()
	d := stack.Deps(t, rec)
	d.Store, d.Coordinator = s, c
	e := enginetest.Engine(t, enginetest.Config(), d)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = e.Shutdown(sctx)
		cancel()
		<-done
		closeC()
	}()
	in := core.Inbound{ConvKey: "api:c1", MessageID: "m1", User: core.Actor{ID: "alice", Name: "alice"}, Text: "check the cluster", Time: time.Now()}
	if err := e.Handle(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the model request", func() bool { return len(stack.LLM.Requests()) == 1 })
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	done1 := rec.Wait(t, 60*time.Second, 1, coretest.Of(core.EventCompleted))
	if err := cluster.Restart(); err != nil {
		t.Fatal(err)
	}
	// The replica re-takes its liveness; its sweeps run every 3 s.
	waitFor(t, 20*time.Second, "the run's end recorded", func() bool {
		r, err := s.Run(t.Context(), done1.RunID)
		return err == nil && r.Status != core.RunRunning
	})
	time.Sleep(7 * time.Second)
	if n := len(stack.LLM.Requests()); n != 1 {
		t.Errorf("the model was called %d times; want once", n)
	}
	for _, ev := range rec.Events() {
		if ev.Type == core.EventWorkflowError && ev.Text == core.RetryNote {
			t.Errorf("a run that ended was retried: %q", ev.Text)
		}
	}
}
