package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Issue 25: the event log's commits do not fsync (synchronous=NORMAL for
// their transaction only): an fsync per batch of events held the one
// writer connection a new message's commit waits for. Every other commit
// stays durable: the writer is back at FULL right after, also when the
// events' transaction fails.
func TestEventLogCommitsDoNotWaitForTheDisk(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "opsgate.db"))
	var inside []int
	s.SeeEventsTx(func(ctx context.Context, tx *sql.Tx) {
		var n int
		if err := tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&n); err != nil {
			t.Error(err)
		}
		inside = append(inside, n)
	})
	if n, err := s.WriterSynchronous(ctx); err != nil || n != 2 {
		t.Fatalf("writer's synchronous before = %d, %v; want 2 (FULL)", n, err)
	}
	ev := core.Event{Type: core.EventToken, ConvKey: "telegram:1:1", RunID: "r1", Seq: 1, Time: time.Now(), Text: "hi"}
	if err := s.AppendEvents(ctx, []core.Event{ev}); err != nil {
		t.Fatal(err)
	}
	if len(inside) != 1 || inside[0] != 1 {
		t.Errorf("synchronous inside AppendEvents' transaction = %v; want [1] (NORMAL)", inside)
	}
	if n, err := s.WriterSynchronous(ctx); err != nil || n != 2 {
		t.Errorf("writer's synchronous after AppendEvents = %d, %v; want 2 (FULL): the next commit must be durable", n, err)
	}
	// A durable write after it is durable, and the event is kept.
	if _, err := s.SaveInbound(ctx, core.Inbound{ConvKey: "telegram:1:1", MessageID: "m1", Text: "next", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Events(ctx, core.EventQuery{ConvKey: "telegram:1:1"})
	if err != nil || len(got) != 1 || got[0].Text != "hi" {
		t.Errorf("Events = %+v, %v; want the event kept", got, err)
	}
	// A transaction that fails (a cancelled context) leaves the writer at
	// FULL too.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	ev.Seq = 2
	if err := s.AppendEvents(cctx, []core.Event{ev}); err == nil {
		t.Error("AppendEvents with a cancelled context succeeded")
	}
	if n, err := s.WriterSynchronous(ctx); err != nil || n != 2 {
		t.Errorf("writer's synchronous after a failed AppendEvents = %d, %v; want 2 (FULL)", n, err)
	}
}
