package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/opsgate/opsgate/core"
)

// Events are kept as people are shown them (after Deps.Display), numbered
// across the conversation's runs, so that a stream that reconnects reads
// exactly what it missed (docs/design.md §15).
func TestEventsAreKeptAsShownForStreamsThatReconnect(t *testing.T) {
	shout := func(dst []core.Event, ev core.Event) []core.Event {
		if ev.Type == core.EventToken {
			ev.Text = strings.ToUpper(ev.Text)
		}
		return append(dst, ev)
	}
	h := newHarness(t, withDisplay(shout))
	h.llm.Push(text("first answer"), text("second answer"))
	h.say("hello")
	h.rec.WaitCompleted(t, 1)
	// No Wait: Events itself waits for what was emitted to be kept.
	kept, err := h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kept); n == 0 || kept[n-1].Type != core.EventCompleted {
		t.Fatalf("the kept events do not end with completed:\n%s", stamps(kept))
	}
	h.say("again")
	h.rec.WaitCompleted(t, 2)

	shown := h.rec.Events()
	kept, err = h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv})
	if err != nil {
		t.Fatal(err)
	}
	opts := cmp.Options{cmpopts.EquateApproxTime(time.Microsecond), cmpopts.EquateEmpty()}
	if d := cmp.Diff(shown, kept, opts); d != "" {
		t.Fatalf("kept events differ from those shown (-shown +kept):\n%s", d)
	}
	var tokens []string
	for i, ev := range shown {
		if i > 0 && ev.Seq <= shown[i-1].Seq {
			t.Fatalf("seq %d after %d: numbers must grow across the conversation's runs", ev.Seq, shown[i-1].Seq)
		}
		if ev.Type == core.EventToken {
			tokens = append(tokens, ev.Text)
		}
	}
	if got := strings.Join(tokens, ""); got != "FIRST ANSWERSECOND ANSWER" {
		t.Errorf("streamed text = %q; want it as Display made it", got)
	}

	mid := len(shown) / 2
	after, err := h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv, After: shown[mid].Seq})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(stamps(shown[mid+1:]), stamps(after)); d != "" {
		t.Errorf("events after %d (-want +got):\n%s", shown[mid].Seq, d)
	}
	second := shown[len(shown)-1].RunID
	run, err := h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv, RunID: second})
	if err != nil {
		t.Fatal(err)
	}
	if len(run) == 0 || run[0].Type != core.EventReady {
		t.Fatalf("the second run's events do not start with ready:\n%s", stamps(run))
	}
	for _, ev := range run {
		if ev.RunID != second {
			t.Fatalf("event of run %s in the second run's events", ev.RunID)
		}
	}
}

// A store that cannot keep events costs a reconnecting stream its replay
// (its events wait, in memory, for the store), never the run or the live
// subscribers.
func TestEventsNotKeptTheRunGoesOn(t *testing.T) {
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { return failingEventLog{s} }))
	h.llm.Push(text("answer"))
	h.say("hello")
	h.rec.WaitCompleted(t, 1)
	waitIdle(t, h.eng)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := h.eng.Events(ctx, core.EventQuery{ConvKey: conv}); err == nil {
		t.Fatal("Events answered from a store that fails")
	}
}

type failingEventLog struct{ core.Store }

func (failingEventLog) AppendEvents(context.Context, []core.Event) error {
	return context.DeadlineExceeded
}

func (failingEventLog) Events(context.Context, core.EventQuery) ([]core.Event, error) {
	return nil, context.DeadlineExceeded
}
