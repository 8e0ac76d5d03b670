package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// downStore is a store whose event log and sequence numbers fail while
// down is set, as a database that went away fails them; the rest of the
// store keeps working, so the run goes on. (The real outage, PostgreSQL
// stopped and restarted, is adapters/httpapi's
// TestSSEStreamsMissNothingAcrossAStoreOutage.)
type downStore struct {
	core.Store
	down *atomic.Bool
}

var errDown = errors.New("store: connection refused")

func (s downStore) AppendEvents(ctx context.Context, evs []core.Event) error {
	if s.down.Load() {
		return errDown
	}
	return s.Store.AppendEvents(ctx, evs)
}

func (s downStore) ReserveSeq(ctx context.Context, conv string, n int64) (int64, error) {
	if s.down.Load() {
		return 0, errDown
	}
	return s.Store.ReserveSeq(ctx, conv, n)
}

// outage streams an answer of 80 words with the event log down from its
// first token to its end, brings the store back and sends a second message
// (a new run, numbered from the store again). It returns what the engine's
// subscriber received and what the log kept.
func outage(t *testing.T, opts ...option) (shown, kept []core.Event) {
	t.Helper()
	var down atomic.Bool
	h := newHarness(t, append(opts, withStoreWrapper(func(s core.Store) core.Store { return downStore{s, &down} }))...)
	w := make([]string, 80)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", i+1)
	}
	hold := make(chan struct{})
	h.llm.Push(llmfake.Reply{Text: strings.Join(w, " "), Hold: hold}, text("back"))
	h.say("stream")
	h.rec.Wait(t, 10*time.Second, 1, func(ev core.Event) bool { return ev.Type == core.EventToken })
	if _, err := h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv}); err != nil { // kept so far
		t.Fatal(err)
	}
	down.Store(true)
	close(hold)
	h.rec.WaitCompleted(t, 1)
	waitIdle(t, h.eng)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := h.eng.Events(ctx, core.EventQuery{ConvKey: conv}); err == nil {
		t.Fatal("Events answered while the events waited for the store")
	}
	down.Store(false)
	h.say("and now?")
	h.rec.WaitCompleted(t, 2)
	kept, err := h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv})
	if err != nil {
		t.Fatal(err)
	}
	shown = h.rec.Events()
	for i, ev := range shown {
		if i > 0 && ev.Seq <= shown[i-1].Seq {
			t.Fatalf("seq %d after %d: a number used while the store was down was handed out again", ev.Seq, shown[i-1].Seq)
		}
	}
	return shown, kept
}

// Issue 20, acceptance 7 (in process, in addition to the PostgreSQL test):
// the events emitted while the store refuses them wait in memory and are
// written, in order, once it is back; the numbers used meanwhile are never
// handed out again. Engine.Events then gives every event shown.
func TestEventsEmittedWhileTheStoreIsDownAreKeptWhenItReturns(t *testing.T) {
	shown, kept := outage(t)
	if d := cmp.Diff(stamps(shown), stamps(kept)); d != "" {
		t.Fatalf("kept events differ from those shown (-shown +kept):\n%s", d)
	}
}

// With room for 5 waiting events, the oldest are dropped and the log keeps
// a gap naming them in their place: every event shown is kept, or inside a
// gap kept before the events after it.
func TestEventsDroppedFromAFullBufferLeaveAGap(t *testing.T) {
	shown, kept := outage(t, withConfig(func(c *core.Config) { c.EventBuffer = 5 }))
	var gaps []core.Gap
	i := 0
	for _, ev := range kept {
		if ev.Type == core.EventGap {
			if ev.Gap == nil || ev.Gap.From > ev.Gap.To || ev.Seq != ev.Gap.To {
				t.Fatalf("gap event %+v", ev)
			}
			gaps = append(gaps, *ev.Gap)
			continue
		}
		for i < len(shown) && shown[i].Seq < ev.Seq {
			if !covered(gaps, shown[i].Seq) {
				t.Fatalf("event %d (%s) is neither kept nor in a gap before %d:\n%s", shown[i].Seq, shown[i].Type, ev.Seq, strings.Join(stamps(kept), "\n"))
			}
			i++
		}
		if i >= len(shown) || shown[i].Seq != ev.Seq || shown[i].Type != ev.Type {
			t.Fatalf("kept %d %s, not what was shown next", ev.Seq, ev.Type)
		}
		i++
	}
	if i != len(shown) {
		t.Fatalf("the kept events end before %d", shown[i].Seq)
	}
	if len(gaps) == 0 {
		t.Fatal("no gap, though more events waited than the buffer holds")
	}
}

func covered(gaps []core.Gap, seq int64) bool {
	for _, g := range gaps {
		if g.From <= seq && seq <= g.To {
			return true
		}
	}
	return false
}

// Shutdown does not hang on a store that stays down: it waits for the
// events until its ctx ends, then gives them up (and logs them as lost).
func TestShutdownGivesUpOnEventsAStoreThatIsDownNeverTook(t *testing.T) {
	var down atomic.Bool
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { return downStore{s, &down} }))
	down.Store(true)
	h.llm.Push(text("an answer the store never sees"))
	h.say("hello")
	h.rec.WaitCompleted(t, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := h.eng.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v; the runs were done, only events waited", err)
	}
	// Given up: Events no longer waits for them.
	if _, err := h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv}); err != nil {
		t.Fatalf("Events after Shutdown: %v", err)
	}
}
