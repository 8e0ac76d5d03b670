package memory

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/incident"
	"github.com/opsgate/opsgate/memory/internal/bothstores"
)

// Issue 24: both stores keep incidents so that two replicas open a
// group's incident once and never overwrite each other's updates.
func TestIncidentStoreCompareAndSet(t *testing.T) {
	run := func(t *testing.T, s incident.Store) {
		ctx := t.Context()
		at := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
		n := incident.Notification{Version: "4", GroupKey: "g1", Status: incident.Firing, Receiver: "opsgate",
			Alerts: []incident.Alert{{Fingerprint: "f1", Status: incident.Firing, StartsAt: at, Labels: map[string]string{"alertname": "Down"}}}}
		plan := incident.Decide(nil, n, 0, "slack:C1", at, time.Hour)

		// Two replicas open the group's first incident at once: one wins.
		var wg sync.WaitGroup
		results := make([]error, 4)
		for i := range results {
			wg.Add(1)
			go func() { defer wg.Done(); _, results[i] = s.SaveIncident(ctx, plan.Next) }()
		}
		wg.Wait()
		won := 0
		for _, err := range results {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, incident.ErrConflict):
				t.Fatalf("SaveIncident: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of 4 concurrent inserts won, want 1", won)
		}
		r, ok, err := s.LatestIncident(ctx, "g1")
		if err != nil || !ok || r.Key != plan.Next.Key || r.Version != 1 || len(r.Alerts) != 1 || !r.OpenedAt.Equal(at) {
			t.Fatalf("LatestIncident = %+v, %v, %v", r, ok, err)
		}
		// Compare-and-set: the first update of version 1 wins.
		r.Thread, r.Root = "slack:T:C1:1.0", "C1/1.0"
		saved, err := s.SaveIncident(ctx, r)
		if err != nil || saved.Version != 2 {
			t.Fatalf("update: %+v, %v", saved, err)
		}
		if _, err := s.SaveIncident(ctx, r); !errors.Is(err, incident.ErrConflict) {
			t.Fatalf("a second update of version 1 = %v, want ErrConflict", err)
		}
		got, ok, err := s.IncidentByThread(ctx, "slack:T:C1:1.0")
		if err != nil || !ok || got.Key != r.Key || got.Root != "C1/1.0" {
			t.Fatalf("IncidentByThread = %+v, %v, %v", got, ok, err)
		}
		if _, ok, err := s.IncidentByThread(ctx, ""); ok || err != nil {
			t.Errorf("IncidentByThread(\"\") = %v, %v", ok, err)
		}
		if _, ok, err := s.Incident(ctx, "incident:nope"); ok || err != nil {
			t.Errorf("Incident(unknown) = %v, %v", ok, err)
		}
		// The group's next incident is the latest.
		next := incident.Record{Key: incident.Key("g1", 2), GroupKey: "g1", Seq: 2, Status: incident.Firing, OpenedAt: at, UpdatedAt: at}
		if _, err := s.SaveIncident(ctx, next); err != nil {
			t.Fatal(err)
		}
		if r, _, _ := s.LatestIncident(ctx, "g1"); r.Seq != 2 {
			t.Errorf("latest seq = %d, want 2", r.Seq)
		}
	}
	t.Run("sqlite", func(t *testing.T) { run(t, bothstores.SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { run(t, bothstores.Postgres(t)) })
}
