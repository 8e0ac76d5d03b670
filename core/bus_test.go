package core_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// The subscription tests: several senders hear one conversation, each at
// its own pace (docs/design.md §5).

// stamps are the (type, seq, run) of events, what every subscriber of a
// conversation must see alike.
func stamps(evs []core.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%s %d %s", ev.Type, ev.Seq, ev.RunID)
	}
	return out
}

func waitIdle(t *testing.T, e *core.Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Wait(ctx); err != nil {
		t.Fatalf("engine never idle: %v", err)
	}
}

func TestSubscribersOfOneConversationGetEveryEventInOrderWithTheSameSeq(t *testing.T) {
	h := newHarness(t)
	recs := []*coretest.Recorder{coretest.NewRecorder(), coretest.NewRecorder(), coretest.NewRecorder()}
	for _, r := range recs {
		h.eng.Subscribe(conv, r, core.SubscribeOptions{})
	}
	owned := coretest.NewRecorder()
	h.eng.Subscribe("", owned, core.SubscribeOptions{Owns: func(k string) bool { return k == conv }})
	other := coretest.NewRecorder()
	h.eng.Subscribe("terminal:bob", other, core.SubscribeOptions{})
	notOwned := coretest.NewRecorder()
	h.eng.Subscribe("", notOwned, core.SubscribeOptions{Owns: func(k string) bool { return k != conv }})

	h.llm.Push(text("first answer"), text("second answer"))
	h.say("hello")
	h.rec.WaitCompleted(t, 1)
	h.say("again")
	h.rec.WaitCompleted(t, 2)
	waitIdle(t, h.eng)

	want := stamps(h.rec.Events())
	if len(want) < 6 {
		t.Fatalf("the default sender got only %v", want)
	}
	last := map[string]int64{} // by run
	for _, ev := range h.rec.Events() {
		if ev.Seq <= last[ev.RunID] {
			t.Fatalf("seq %d after %d:\n%s", ev.Seq, last[ev.RunID], coretest.Dump(h.rec.Events()))
		}
		last[ev.RunID] = ev.Seq
	}
	for i, r := range append(recs, owned) {
		if diff := cmp.Diff(want, stamps(r.Events())); diff != "" {
			t.Errorf("subscriber %d differs from the default sender (-want +got):\n%s", i, diff)
		}
	}
	if n := len(other.Events()) + len(notOwned.Events()); n != 0 {
		t.Errorf("subscribers of other conversations got %d events", n)
	}
}

// blockingSender blocks every Send until release is closed.
type blockingSender struct {
	rec     *coretest.Recorder
	entered chan struct{} // closed when the first Send starts
	release chan struct{}
	first   atomic.Bool
}

func newBlockingSender() *blockingSender {
	return &blockingSender{rec: coretest.NewRecorder(), entered: make(chan struct{}), release: make(chan struct{})}
}

func (b *blockingSender) Send(ctx context.Context, ev core.Event) error {
	if b.first.CompareAndSwap(false, true) {
		close(b.entered)
	}
	<-b.release
	return b.rec.Send(ctx, ev)
}

func TestBlockedSubscriberDelaysNeitherOtherSubscribersNorTheRun(t *testing.T) {
	h := newHarness(t)
	blocked := newBlockingSender()
	h.eng.Subscribe(conv, blocked, core.SubscribeOptions{})
	fast := coretest.NewRecorder()
	h.eng.Subscribe(conv, fast, core.SubscribeOptions{})

	h.llm.Push(text("the pods are fine"), text("and the nodes too"))
	h.say("how are the pods?")
	done := fast.WaitCompleted(t, 1)
	h.rec.WaitCompleted(t, 1)
	<-blocked.entered
	if done.Status != core.RunDone {
		t.Errorf("completed status = %s", done.Status)
	}
	// The run ended: the next message runs, and is heard, while the
	// blocked subscriber still holds its first event.
	h.say("and the nodes?")
	fast.WaitCompleted(t, 2)
	if n := len(blocked.rec.Events()); n != 0 {
		t.Fatalf("the blocked subscriber got %d events while blocked", n)
	}

	close(blocked.release)
	blocked.rec.WaitCompleted(t, 2)
	waitIdle(t, h.eng)
	if diff := cmp.Diff(stamps(fast.Events()), stamps(blocked.rec.Events())); diff != "" {
		t.Errorf("the unblocked subscriber's events differ (-fast +blocked):\n%s", diff)
	}
}

func TestUnsubscribeStopsDelivery(t *testing.T) {
	h := newHarness(t)
	r := coretest.NewRecorder()
	cancel := h.eng.Subscribe(conv, r, core.SubscribeOptions{})
	h.llm.Push(text("one"), text("two"))
	h.say("first")
	r.WaitCompleted(t, 1)
	waitIdle(t, h.eng)
	had := len(r.Events())
	cancel()
	cancel() // twice is fine
	h.say("second")
	h.rec.WaitCompleted(t, 2)
	waitIdle(t, h.eng)
	if n := len(r.Events()); n != had {
		t.Errorf("after cancel the subscriber got %d more events:\n%s", n-had, coretest.Dump(r.Events()[had:]))
	}
}

func TestUnsubscribeDropsWhatIsQueued(t *testing.T) {
	h := newHarness(t)
	blocked := newBlockingSender()
	cancel := h.eng.Subscribe(conv, blocked, core.SubscribeOptions{})
	h.llm.Push(text("answer"))
	h.say("hello")
	h.rec.WaitCompleted(t, 1)
	<-blocked.entered
	cancel()
	close(blocked.release)
	waitIdle(t, h.eng)
	// The Send in progress when cancel was called finishes; nothing after it.
	if n := len(blocked.rec.Events()); n != 1 {
		t.Errorf("a cancelled subscriber got %d events, want the 1 in progress", n)
	}
}

func TestPanickingSubscriberBreaksNoOtherSubscriber(t *testing.T) {
	h := newHarness(t)
	var panics atomic.Int64
	h.eng.Subscribe(conv, core.SenderFunc(func(context.Context, core.Event) error {
		panics.Add(1)
		panic("renderer bug")
	}), core.SubscribeOptions{})
	r := coretest.NewRecorder()
	h.eng.Subscribe(conv, r, core.SubscribeOptions{})
	before := h.eng.SendErrors()

	h.llm.Push(text("still fine"))
	h.say("hello")
	r.WaitCompleted(t, 1)
	waitIdle(t, h.eng)
	if diff := cmp.Diff(stamps(h.rec.Events()), stamps(r.Events())); diff != "" {
		t.Errorf("the other subscriber's events (-default +other):\n%s", diff)
	}
	n := int64(len(r.Events()))
	if p := panics.Load(); p != n {
		t.Errorf("the panicking subscriber was called %d times, want every one of %d events", p, n)
	}
	if got := h.eng.SendErrors() - before; got != n {
		t.Errorf("send errors = %d, want %d (one per panic)", got, n)
	}
}

func TestFullBufferDropsForThatSubscriberOnly(t *testing.T) {
	h := newHarness(t)
	blocked := newBlockingSender()
	h.eng.Subscribe(conv, blocked, core.SubscribeOptions{Buffer: 1})
	before := h.eng.SendErrors()
	h.llm.Push(text(strings.Repeat("word ", 20)))
	h.say("hello")
	h.rec.WaitCompleted(t, 1)
	<-blocked.entered
	close(blocked.release)
	waitIdle(t, h.eng)
	all := len(h.rec.Events())
	got := len(blocked.rec.Events())
	// One in progress when the rest came, one buffered.
	if got != 2 {
		t.Errorf("a subscriber with a buffer of 1 got %d of %d events, want 2", got, all)
	}
	if dropped := h.eng.SendErrors() - before; dropped != int64(all-got) {
		t.Errorf("send errors = %d, want %d dropped", dropped, all-got)
	}
}

// lastArrival records, per event seq, when the last of its subscribers got
// it.
type lastArrival struct {
	mu   sync.Mutex
	last map[int64]time.Time
	sent map[int64]time.Time
}

func (l *lastArrival) sender() core.EventSender {
	return core.SenderFunc(func(_ context.Context, ev core.Event) error {
		now := time.Now()
		l.mu.Lock()
		if now.After(l.last[ev.Seq]) {
			l.last[ev.Seq] = now
		}
		l.sent[ev.Seq] = ev.Time
		l.mu.Unlock()
		return nil
	})
}

// BenchmarkFanOut100Subscribers runs one short answer per iteration to a
// conversation with 100 subscribers and reports the mean time from an
// event's emission to its delivery to the last of them.
func BenchmarkFanOut100Subscribers(b *testing.B) {
	s := enginetest.New(b)
	rec := coretest.NewRecorder()
	eng := enginetest.Engine(b, enginetest.Config(), s.Deps(b, rec))
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng.Shutdown(ctx)
	})
	l := &lastArrival{last: map[int64]time.Time{}, sent: map[int64]time.Time{}}
	for range 100 {
		eng.Subscribe(conv, l.sender(), core.SubscribeOptions{})
	}
	s.LLM.SetResponder(func(llmfake.Request) llmfake.Reply { return text("all good in the namespace") })
	var total time.Duration
	var events int
	b.ResetTimer()
	for i := range b.N {
		if err := eng.Handle(context.Background(), core.Inbound{ConvKey: conv, MessageID: fmt.Sprintf("b%d", i), User: alice, Text: "status?"}); err != nil {
			b.Fatal(err)
		}
		rec.WaitCompleted(b, i+1)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := eng.Wait(ctx)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		l.mu.Lock()
		for seq, at := range l.last {
			total += at.Sub(l.sent[seq])
			events++
		}
		clear(l.last)
		clear(l.sent)
		l.mu.Unlock()
	}
	if events > 0 {
		b.ReportMetric(float64(total.Nanoseconds())/float64(events), "ns/event-to-last")
	}
}
