package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// callLog is a store that notes every call the engine makes on it, in
// order, with the model's requests noted in the same list (mark), so a
// test can say what the engine asked the store for between a message and
// the model's request.
type callLog struct {
	core.Store
	mu    sync.Mutex
	calls []string
}

func (c *callLog) note(name string) {
	c.mu.Lock()
	c.calls = append(c.calls, name)
	c.mu.Unlock()
}

// mark notes something that is not a store call (the model's request).
func (c *callLog) mark(what string) { c.note("<" + what + ">") }

// since returns the calls noted from the first one named from on, up to
// the first one named to (excluded).
func (c *callLog) between(from, to string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	in := false
	for _, name := range c.calls {
		switch {
		case name == from && !in:
			in = true
		case name == to && in:
			return out
		}
		if in {
			out = append(out, name)
		}
	}
	return out
}

func (c *callLog) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.calls {
		if s == name {
			n++
		}
	}
	return n
}

func (c *callLog) Apply(ctx context.Context, b core.Batch) error {
	c.note("Apply")
	return c.Store.Apply(ctx, b)
}
func (c *callLog) SaveInbound(ctx context.Context, in core.Inbound) (bool, error) {
	c.note("SaveInbound")
	return c.Store.SaveInbound(ctx, in)
}
func (c *callLog) PendingInbound(ctx context.Context) ([]core.Inbound, error) {
	c.note("PendingInbound")
	return c.Store.PendingInbound(ctx)
}
func (c *callLog) Conversation(ctx context.Context, key string) (core.Conversation, error) {
	c.note("Conversation")
	return c.Store.Conversation(ctx, key)
}
func (c *callLog) Messages(ctx context.Context, key string) ([]core.Message, error) {
	c.note("Messages")
	return c.Store.Messages(ctx, key)
}
func (c *callLog) Conversations(ctx context.Context, f core.ConversationFilter) ([]core.Conversation, error) {
	c.note("Conversations")
	return c.Store.Conversations(ctx, f)
}
func (c *callLog) Run(ctx context.Context, id string) (core.Run, error) {
	c.note("Run")
	return c.Store.Run(ctx, id)
}
func (c *callLog) ReserveSeq(ctx context.Context, convKey string, n int64) (int64, error) {
	c.note("ReserveSeq")
	return c.Store.ReserveSeq(ctx, convKey, n)
}
func (c *callLog) UnfinishedRuns(ctx context.Context) ([]core.Run, error) {
	c.note("UnfinishedRuns")
	return c.Store.UnfinishedRuns(ctx)
}
func (c *callLog) Checkpoint(ctx context.Context, runID string) (core.Checkpoint, error) {
	c.note("Checkpoint")
	return c.Store.Checkpoint(ctx, runID)
}
func (c *callLog) ClaimCheckpoint(ctx context.Context, runID string) (core.Checkpoint, error) {
	c.note("ClaimCheckpoint")
	return c.Store.ClaimCheckpoint(ctx, runID)
}
func (c *callLog) Checkpoints(ctx context.Context, convKey string) ([]core.Checkpoint, error) {
	c.note("Checkpoints")
	return c.Store.Checkpoints(ctx, convKey)
}
func (c *callLog) Approval(ctx context.Context, id string) (core.Approval, error) {
	c.note("Approval")
	return c.Store.Approval(ctx, id)
}
func (c *callLog) Approvals(ctx context.Context, runID string) ([]core.Approval, error) {
	c.note("Approvals")
	return c.Store.Approvals(ctx, runID)
}
func (c *callLog) DecideApproval(ctx context.Context, id string, d core.ApprovalOutcome) (core.Approval, error) {
	c.note("DecideApproval")
	return c.Store.DecideApproval(ctx, id, d)
}
func (c *callLog) AddVote(ctx context.Context, id string, v core.Vote) (core.Approval, error) {
	c.note("AddVote")
	return c.Store.AddVote(ctx, id, v)
}
func (c *callLog) ExpiredApprovals(ctx context.Context, now time.Time) ([]core.Approval, error) {
	c.note("ExpiredApprovals")
	return c.Store.ExpiredApprovals(ctx, now)
}
func (c *callLog) Audit(ctx context.Context, f core.AuditFilter) ([]core.AuditEntry, error) {
	c.note("Audit")
	return c.Store.Audit(ctx, f)
}
func (c *callLog) AppendEvents(ctx context.Context, evs []core.Event) error {
	c.note("AppendEvents")
	return c.Store.AppendEvents(ctx, evs)
}
func (c *callLog) Events(ctx context.Context, q core.EventQuery) ([]core.Event, error) {
	c.note("Events")
	return c.Store.Events(ctx, q)
}
func (c *callLog) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	c.note("PruneEvents")
	return c.Store.PruneEvents(ctx, before)
}

// Between a message and the model's request the engine makes the store
// calls round 1 made (issue 25): the message kept before Handle returns,
// the conversation read, and the run's start as one commit. The run's
// first event numbers come with that commit (no ReserveSeq of their own),
// and the events wait to be kept until after the request (no
// AppendEvents competing with the run's writes).
func TestMessageToModelMakesOnlyRoundOneStoreCalls(t *testing.T) {
	log := &callLog{}
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { log.Store = s; return log }))
	h.llm.SetResponder(func(llmfake.Request) llmfake.Reply {
		log.mark("model")
		return text("all good")
	})
	for turn := 1; turn <= 2; turn++ {
		h.say(fmt.Sprintf("is checkout healthy? (%d)", turn))
		h.rec.WaitCompleted(t, turn)
		// The run's start (Apply) is written while the model is asked
		// (TestModelIsAskedWhileTheRunStartIsWritten): it may be noted
		// on either side of the request, but only once.
		got := slices.DeleteFunc(log.between("SaveInbound", "<model>"), func(s string) bool { return s == "Apply" })
		want := []string{"SaveInbound", "Checkpoints", "Conversation", "Messages"}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("turn %d: store calls from the message to the model's request, the run's start aside (-want +got):\n%s", turn, d)
		}
		if n := log.count("Apply"); n != 2 {
			t.Fatalf("turn %d: %d commits; want 2 (the run's start and its end)", turn, n)
		}
		if err := h.eng.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The next turn's calls are counted from its own message.
		log.mu.Lock()
		log.calls = nil
		log.mu.Unlock()
	}
}

// The events of a turn are kept in a few store writes, not one per token:
// a write per token cost more CPU than the rest of the turn and competed
// with the run's writes (issue 25). They are all kept, and a reader of the
// store does not wait for the writer's pause.
func TestEventsOfATurnAreKeptInFewWrites(t *testing.T) {
	log := &callLog{}
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { log.Store = s; return log }))
	answer := strings.Repeat("token ", 60)
	h.llm.Push(llmfake.Reply{Text: answer, TokenDelay: time.Millisecond})
	h.say("stream a long answer")
	h.rec.WaitCompleted(t, 1)
	shown := h.rec.Events()
	kept, err := h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(shown) {
		t.Fatalf("%d events kept, %d shown", len(kept), len(shown))
	}
	tokens := 0
	for _, ev := range shown {
		if ev.Type == core.EventToken {
			tokens++
		}
	}
	if tokens < 20 {
		t.Fatalf("only %d token events: the test needs a streamed answer", tokens)
	}
	if n := log.count("AppendEvents"); n > 3 {
		t.Errorf("%d events (%d tokens) kept in %d store writes; want at most 3", len(kept), tokens, n)
	}
}

// Engine.Run does not prune the kept events as it starts: a delete over
// every kept event would compete with the adapters' start and the first
// messages for the store (issue 25). It prunes later, then hourly.
func TestRunDoesNotPruneEventsAtStart(t *testing.T) {
	log := &callLog{}
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { log.Store = s; return log }),
		withConfig(func(c *core.Config) { c.ExpirySweep = time.Millisecond }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.eng.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	h.llm.Push(text("all good"))
	h.say("is checkout healthy?")
	h.rec.WaitCompleted(t, 1)
	// Sweeps ran meanwhile (every millisecond): wait for a few more.
	for n := log.count("ExpiredApprovals"); log.count("ExpiredApprovals") < n+3; {
		time.Sleep(time.Millisecond)
	}
	if n := log.count("PruneEvents"); n != 0 {
		t.Fatalf("Run pruned the kept events %d times as it started; want none before a minute", n)
	}
}

// startGate is a store whose commit of a run's start waits (up to a
// second) for the turn's memory retrieval to have begun, and notes
// whether it had.
type startGate struct {
	core.Store
	retrieving chan struct{}
	overlapped chan bool
}

func (g *startGate) Apply(ctx context.Context, b core.Batch) error {
	if b.CreateRun != nil {
		select {
		case <-g.retrieving:
			g.overlapped <- true
		case <-time.After(time.Second):
			g.overlapped <- false
		}
	}
	return g.Store.Apply(ctx, b)
}

// retrieverFunc is a Retriever.
type retrieverFunc func(context.Context, core.MemoryQuery) (core.MemoryContext, error)

func (f retrieverFunc) Retrieve(ctx context.Context, q core.MemoryQuery) (core.MemoryContext, error) {
	return f(ctx, q)
}

// A new run's memory is retrieved while its start is written, not after
// (issue 25): the model's request waits for the longer of the two, not
// for both in turn. What was retrieved still reaches the model.
func TestMemoryIsRetrievedWhileTheRunStartIsWritten(t *testing.T) {
	gate := &startGate{retrieving: make(chan struct{}), overlapped: make(chan bool, 1)}
	var once sync.Once
	mem := retrieverFunc(func(_ context.Context, q core.MemoryQuery) (core.MemoryContext, error) {
		once.Do(func() { close(gate.retrieving) })
		return core.MemoryContext{Text: "<memory_context>roll back with helm (" + q.Text + ")</memory_context>",
			Refs: []core.MemoryRef{{ID: "d1", Path: "rollback.md", Trusted: true}}}, nil
	})
	h := newHarness(t, withMemory(mem), withStoreWrapper(func(s core.Store) core.Store { gate.Store = s; return gate }))
	h.llm.Push(text("done"))
	h.say("how do I roll back?")
	h.rec.WaitCompleted(t, 1)
	if !<-gate.overlapped {
		t.Error("the run's start was written before its memory retrieval began")
	}
	reqs := h.llm.Requests()
	if len(reqs) != 1 || !strings.Contains(fmt.Sprint(reqs[0].Messages), "roll back with helm (how do I roll back?)") {
		t.Errorf("the model's request lacks the turn's memory: %v", reqs)
	}
}

// startHold is a store whose commit of a run's start waits (up to five
// seconds) for the model to be asked, notes whether it was, and then
// fails when fail is set.
type startHold struct {
	core.Store
	asked    chan struct{}
	overlaps chan bool
	fail     bool
}

func newStartHold(fail bool) *startHold {
	return &startHold{asked: make(chan struct{}), overlaps: make(chan bool, 1), fail: fail}
}

func (g *startHold) Apply(ctx context.Context, b core.Batch) error {
	if b.CreateRun != nil {
		select {
		case <-g.asked:
			g.overlaps <- true
		case <-time.After(5 * time.Second):
			g.overlaps <- false
		}
		if g.fail {
			return errors.New("disk I/O error")
		}
	}
	return g.Store.Apply(ctx, b)
}

// A new run's first model request does not wait for its start to be
// written (issue 25: that commit's fsync was a share of message to
// model); the model thinks while the disk writes. Nobody sees anything of
// the run before its start is stored, and then sees it whole and in
// order: ready, the title, then what the model said.
func TestModelIsAskedWhileTheRunStartIsWritten(t *testing.T) {
	hold := newStartHold(false)
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { hold.Store = s; return hold }))
	shownWhenAsked := -1
	h.llm.SetResponder(func(llmfake.Request) llmfake.Reply {
		shownWhenAsked = len(h.rec.Events())
		close(hold.asked)
		return text("checkout is healthy")
	})
	h.say("is checkout healthy?")
	done := h.rec.WaitCompleted(t, 1)
	if !<-hold.overlaps {
		t.Fatal("the model was asked only after the run's start was written")
	}
	if shownWhenAsked != 0 {
		t.Errorf("%d events were shown before the run's start was stored; want none", shownWhenAsked)
	}
	if done.Status != core.RunDone {
		t.Fatalf("run ended %s; want done:\n%s", done.Status, coretest.Dump(h.rec.Events()))
	}
	evs := h.rec.RunEvents(done.RunID)
	if evs[0].Type != core.EventReady {
		t.Errorf("first event %s; want ready:\n%s", evs[0].Type, coretest.Dump(evs))
	}
	assertOrder(t, evs, core.EventReady, core.EventConversationTitle, core.EventGenerationStart, core.EventToken, core.EventCompleted)
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			t.Fatalf("event %d (%s) numbered %d after %d:\n%s", i, evs[i].Type, evs[i].Seq, evs[i-1].Seq, coretest.Dump(evs))
		}
		if evs[i].Time.Before(evs[i-1].Time) {
			t.Fatalf("event %d (%s) at %s, before event %d (%s) at %s", i, evs[i].Type, evs[i].Time, i-1, evs[i-1].Type, evs[i-1].Time)
		}
	}
	if err := h.eng.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	kept, err := h.eng.Events(t.Context(), core.EventQuery{ConvKey: conv})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(evs) {
		t.Errorf("%d events kept, %d shown", len(kept), len(evs))
	}
}

// When a run's start cannot be written, the model may already have
// answered (it was asked meanwhile): nothing of its answer is shown, no
// tool it asked for runs, and the run says it could not start, as it did
// when the model was asked only after the start. The message stays
// pending, to be answered once the store takes writes again.
func TestARunWhoseStartIsNotWrittenShowsNothingOfIt(t *testing.T) {
	hold := newStartHold(true)
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { hold.Store = s; return hold }))
	h.llm.SetResponder(func(llmfake.Request) llmfake.Reply {
		close(hold.asked)
		return llmfake.Reply{Text: "let me look at the pods", ToolCalls: []llmfake.ToolCall{call("c1", "get_pods", `{"namespace":"prod"}`)}}
	})
	h.say("what runs in prod?")
	done := h.rec.WaitCompleted(t, 1)
	if !<-hold.overlaps {
		t.Fatal("the model was not asked while the run's start was written: the test needs it to be")
	}
	if err := h.eng.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs := h.rec.Events()
	var types []core.EventType
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	if d := cmp.Diff([]core.EventType{core.EventWorkflowError, core.EventCompleted}, types); d != "" {
		t.Fatalf("events shown (-want +got):\n%s\n%s", d, coretest.Dump(evs))
	}
	if done.Status != core.RunError || !strings.Contains(evs[0].Error, "could not start") || !strings.Contains(evs[0].Error, "disk I/O error") {
		t.Errorf("the run ended %s with %q; want error, could not start, and why", done.Status, evs[0].Error)
	}
	if got := calledTools(h.k8s); len(got) != 0 {
		t.Errorf("tools ran for a run that was never stored: %v", got)
	}
	if _, err := h.store.Run(t.Context(), done.RunID); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("the run is in the store (err %v); want it not found", err)
	}
	pending, err := h.store.PendingInbound(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Text != "what runs in prod?" {
		t.Errorf("pending messages %+v; want the one whose run could not start", pending)
	}
}
