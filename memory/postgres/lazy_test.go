package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/postgres"
)

// Issue 25: the event log's commits do not wait for the WAL flush
// (synchronous_commit off for their transaction only, SET LOCAL); every
// other commit stays durable: the setting is back to on outside it.
func TestEventLogCommitsDoNotWaitForTheDisk(t *testing.T) {
	ctx := context.Background()
	// The test server runs with synchronous_commit off; this store's
	// sessions start with it on, as a durable server's do.
	url := pgtest.DB(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	s := open(t, url+sep+"synchronous_commit=on")
	var inside []string
	postgres.SeeEventsTx(s, func(v string) { inside = append(inside, v) })
	ev := core.Event{Type: core.EventToken, ConvKey: "telegram:1:1", RunID: "r1", Seq: 1, Time: time.Now(), Text: "hi"}
	if err := s.AppendEvents(ctx, []core.Event{ev}); err != nil {
		t.Fatal(err)
	}
	if len(inside) != 1 || inside[0] != "off" {
		t.Errorf("synchronous_commit inside AppendEvents' transaction = %v; want [off]", inside)
	}
	for range 3 { // every connection of a small pool, likely
		if v, err := postgres.SynchronousCommit(s); err != nil || v != "on" {
			t.Errorf("synchronous_commit outside = %q, %v; want on: other commits must be durable", v, err)
		}
	}
	got, err := s.Events(ctx, core.EventQuery{ConvKey: "telegram:1:1"})
	if err != nil || len(got) != 1 || got[0].Text != "hi" {
		t.Errorf("Events = %+v, %v; want the event kept", got, err)
	}
}
