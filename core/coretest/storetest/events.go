package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// someEvents are events of two runs of conversation "conv-ev" and one of
// another conversation, with the fields a stream shows.
func someEvents(at time.Time) []core.Event {
	return []core.Event{
		{Type: core.EventReady, ConvKey: "conv-ev", RunID: "run-1", Seq: 1, Time: at},
		{Type: core.EventToken, ConvKey: "conv-ev", RunID: "run-1", Seq: 2, Time: at, Text: "chec"},
		{Type: core.EventToolResult, ConvKey: "conv-ev", RunID: "run-1", Seq: 3, Time: at,
			Call: &core.CallInfo{ID: "c1", Name: "get_pods", Arguments: json.RawMessage(`{"namespace":"payments"}`), Result: "3 pods"}},
		{Type: core.EventCompleted, ConvKey: "conv-ev", RunID: "run-1", Seq: 4, Time: at, Status: core.RunDone, Text: "done",
			Usage: &core.Usage{PromptTokens: 10, TotalTokens: 12}, Duration: time.Second},
		{Type: core.EventReady, ConvKey: "other-ev", RunID: "run-x", Seq: 1, Time: at},
		// Seq 5..32 were reserved by a process that died: the next run's
		// events start above them.
		{Type: core.EventReady, ConvKey: "conv-ev", RunID: "run-2", Seq: 33, Time: at},
		{Type: core.EventCompleted, ConvKey: "conv-ev", RunID: "run-2", Seq: 34, Time: at, Status: core.RunDone},
	}
}

func testEventsRoundTrip(t *testing.T, s core.Store) {
	ctx := t.Context()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	evs := someEvents(at)
	// Two appends, as the engine's batches come.
	if err := s.AppendEvents(ctx, evs[:3]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvents(ctx, evs[3:]); err != nil {
		t.Fatal(err)
	}
	conv := []core.Event{evs[0], evs[1], evs[2], evs[3], evs[5], evs[6]}

	got, err := s.Events(ctx, core.EventQuery{ConvKey: "conv-ev"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "every event of the conversation", conv, got)

	got, err = s.Events(ctx, core.EventQuery{ConvKey: "conv-ev", After: 3})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "the events after 3", conv[3:], got)

	got, err = s.Events(ctx, core.EventQuery{ConvKey: "conv-ev", After: 1, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "two events after 1", conv[1:3], got)

	got, err = s.Events(ctx, core.EventQuery{ConvKey: "conv-ev", RunID: "run-2"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "run-2's events", conv[4:], got)

	got, err = s.Events(ctx, core.EventQuery{ConvKey: "conv-ev", Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "the latest event", conv[5:], got)
	got, err = s.Events(ctx, core.EventQuery{ConvKey: "conv-ev", RunID: "run-1", Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "run-1's latest event", conv[3:4], got)

	got, err = s.Events(ctx, core.EventQuery{ConvKey: "conv-ev", After: 34})
	if err != nil || len(got) != 0 {
		t.Fatalf("events after the last = %v, %v; want none", got, err)
	}
}

func testEventsAppendIsIdempotent(t *testing.T, s core.Store) {
	ctx := t.Context()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	evs := someEvents(at)[:2]
	if err := s.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	changed := evs[1]
	changed.Text = "something else"
	if err := s.AppendEvents(ctx, []core.Event{changed}); err != nil {
		t.Fatalf("appending an event already kept: %v", err)
	}
	got, err := s.Events(ctx, core.EventQuery{ConvKey: "conv-ev"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "the events, the first copy kept", evs, got)
	if err := s.AppendEvents(ctx, nil); err != nil {
		t.Fatalf("appending nothing: %v", err)
	}
}

func testEventsPrune(t *testing.T, s core.Store) {
	ctx := t.Context()
	old := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	recent := old.Add(10 * 24 * time.Hour)
	evs := someEvents(old)[:2]
	evs[1].Time = recent
	if err := s.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	n, err := s.PruneEvents(ctx, old.Add(24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("PruneEvents = %d, %v; want 1 pruned", n, err)
	}
	got, err := s.Events(ctx, core.EventQuery{ConvKey: "conv-ev"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "the events left", evs[1:], got)
}
