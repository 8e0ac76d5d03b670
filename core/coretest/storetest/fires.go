package storetest

import (
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

func ledger(t *testing.T, s core.Store) core.FireLedger {
	t.Helper()
	l, ok := s.(core.FireLedger)
	if !ok {
		t.Fatalf("%T does not implement core.FireLedger", s)
	}
	return l
}

func testFireClaimedOnce(t *testing.T, s core.Store) {
	l, ctx := ledger(t, s), t.Context()
	f := core.Fire{Name: "health", At: at(0), By: "replica-a"}
	won, skipped, err := l.ClaimFire(ctx, f, at(-time.Hour))
	if err != nil || !won || skipped {
		t.Fatalf("first ClaimFire = %v, %v, %v; want won", won, skipped, err)
	}
	f.By = "replica-b"
	if won, _, err := l.ClaimFire(ctx, f, at(-time.Hour)); err != nil || won {
		t.Fatalf("second ClaimFire = %v, %v; want lost", won, err)
	}
	if err := l.FinishFire(ctx, "health", at(0), "slack:T:C:1.2", core.FireDone); err != nil {
		t.Fatal(err)
	}
	fs, err := l.Fires(ctx, "health", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].By != "replica-a" || fs[0].Outcome != core.FireDone || fs[0].ConvKey != "slack:T:C:1.2" ||
		!fs[0].At.Equal(at(0).Truncate(time.Microsecond)) || fs[0].FinishedAt.IsZero() {
		t.Fatalf("fires = %+v", fs)
	}
}

func testFireClaimConcurrent(t *testing.T, s core.Store) {
	l, ctx := ledger(t, s), t.Context()
	wins := make(chan int, racers)
	concurrently(racers, func(i int) {
		won, _, err := l.ClaimFire(ctx, core.Fire{Name: "health", At: at(time.Minute), By: "r"}, at(-time.Hour))
		if err != nil {
			t.Errorf("ClaimFire: %v", err)
		}
		if won {
			wins <- i
		}
	})
	if len(wins) != 1 {
		t.Fatalf("%d of %d racers won the fire, want exactly 1", len(wins), racers)
	}
}

// replicaAlive holds the lease by which the ledger knows replica by alive
// (DESIGN §16) until the test ends.
func replicaAlive(t *testing.T, s core.Store, by string) core.Lease {
	t.Helper()
	leaser, ok := s.(core.Leaser)
	if !ok {
		t.Fatalf("%T does not implement core.Leaser", s)
	}
	lease, ok, err := leaser.TryLease(t.Context(), "replica:"+by)
	if err != nil || !ok {
		t.Fatalf("TryLease replica:%s = %v, %v", by, ok, err)
	}
	t.Cleanup(lease.Release)
	return lease
}

// A fire while the previous one still runs (its replica alive) is
// skipped, unless the previous one was claimed before busySince (its
// process is presumed dead).
func testFireSkippedWhileRunning(t *testing.T, s core.Store) {
	l, ctx := ledger(t, s), t.Context()
	replicaAlive(t, s, "a")
	if _, _, err := l.ClaimFire(ctx, core.Fire{Name: "slow", At: at(0), By: "a"}, at(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	won, skipped, err := l.ClaimFire(ctx, core.Fire{Name: "slow", At: at(time.Minute), By: "b"}, time.Now().Add(-time.Hour))
	if err != nil || !won || !skipped {
		t.Fatalf("ClaimFire while the previous runs = %v, %v, %v; want won and skipped", won, skipped, err)
	}
	// Another schedule is not affected.
	if won, skipped, err := l.ClaimFire(ctx, core.Fire{Name: "other", At: at(time.Minute), By: "b"}, time.Now().Add(-time.Hour)); err != nil || !won || skipped {
		t.Fatalf("ClaimFire of another schedule = %v, %v, %v", won, skipped, err)
	}
	// The skipped fire in between does not hide the one still running.
	won, skipped, err = l.ClaimFire(ctx, core.Fire{Name: "slow", At: at(2 * time.Minute), By: "b"}, time.Now().Add(-time.Hour))
	if err != nil || !won || !skipped {
		t.Fatalf("ClaimFire after a skipped fire while the first runs = %v, %v, %v; want won and skipped", won, skipped, err)
	}
	// The running fire was claimed before busySince: presumed dead, not
	// blocking.
	won, skipped, err = l.ClaimFire(ctx, core.Fire{Name: "slow", At: at(3 * time.Minute), By: "b"}, time.Now().Add(time.Hour))
	if err != nil || !won || skipped {
		t.Fatalf("ClaimFire after a stale running fire = %v, %v, %v; want won, not skipped", won, skipped, err)
	}
	fs, err := l.Fires(ctx, "slow", 0)
	var outcomes []string
	for _, f := range fs {
		outcomes = append(outcomes, f.Outcome)
	}
	diff(t, "outcomes, latest first", []string{core.FireRunning, core.FireSkipped, core.FireSkipped, core.FireRunning}, outcomes)
	if err != nil {
		t.Fatal(err)
	}
}

// A fire left running by a process that is gone (its lease released, as
// the system does when the process exits, even by kill -9) blocks nothing:
// the next fire runs and the fire does not wait for busySince (issue 20).
func testFireOfAGoneReplicaBlocksNothing(t *testing.T, s core.Store) {
	l, ctx := ledger(t, s), t.Context()
	lease := replicaAlive(t, s, "gone")
	if _, _, err := l.ClaimFire(ctx, core.Fire{Name: "nightly", At: at(0), By: "gone"}, at(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	won, skipped, err := l.ClaimFire(ctx, core.Fire{Name: "nightly", At: at(time.Minute), By: "b"}, time.Now().Add(-time.Hour))
	if err != nil || !won || !skipped {
		t.Fatalf("ClaimFire while a live replica's fire runs = %v, %v, %v; want won and skipped", won, skipped, err)
	}
	lease.Release() // the process is gone
	// A server may take a moment to see the lease's connection end.
	for i := 2; ; i++ {
		won, skipped, err = l.ClaimFire(ctx, core.Fire{Name: "nightly", At: at(time.Duration(i) * time.Minute), By: "b"}, time.Now().Add(-time.Hour))
		if err != nil || !won {
			t.Fatalf("ClaimFire after the running fire's replica is gone = %v, %v, %v; want won", won, skipped, err)
		}
		if !skipped {
			return
		}
		if i > 50 {
			t.Fatal("the fire of a replica that is gone still holds later fires off after 5 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
