package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// stopBound is the acceptance bound for /stop: the run ends within a second.
const stopBound = time.Second

func TestStopWhileTokensStream(t *testing.T) {
	h := newHarness(t)
	hold := make(chan struct{})
	defer close(hold)
	h.llm.Push(llmfake.Reply{Text: "Looking at the pods now and then some more words", Hold: hold})
	h.say("why is checkout slow?")
	h.rec.Wait(t, 5*time.Second, 1, coretest.Of(core.EventToken))

	start := time.Now()
	if !h.eng.Stop(context.Background(), conv) {
		t.Fatal("Stop found nothing to stop")
	}
	done := h.rec.WaitCompleted(t, 1)
	if took := time.Since(start); took > stopBound {
		t.Errorf("stop took %v, want within %v", took, stopBound)
	}
	if done.Status != core.RunStopped {
		t.Fatalf("completed status = %s, want stopped", done.Status)
	}
	// The next run is not affected by the old stop.
	h.llm.Push(text("fresh answer"))
	h.say("try again")
	next := h.rec.WaitCompleted(t, 2)
	if next.Status != core.RunDone || next.Text != "fresh answer" {
		t.Fatalf("next run = %+v", next)
	}
}

func TestStopWhileASlowToolRuns(t *testing.T) {
	h := newHarness(t)
	// Were the run to go on, the model would ask for get_pods next.
	h.llm.Push(toolCalls(call("c1", "slow_check", `{"seconds":30}`)), toolCalls(call("c2", "get_pods", `{"namespace":"prod"}`)))
	h.say("run the slow check")
	h.k8s.WaitCalls(1, 5*time.Second)

	start := time.Now()
	h.sayAs(alice, "/stop")
	done := h.rec.WaitCompleted(t, 1)
	if took := time.Since(start); took > stopBound {
		t.Errorf("stop took %v, want within %v", took, stopBound)
	}
	if done.Status != core.RunStopped {
		t.Fatalf("completed status = %s, want stopped", done.Status)
	}
	calls := h.k8s.WaitCalls(1, time.Second)
	if len(calls) != 1 || calls[0].Tool != "slow_check" {
		t.Fatalf("MCP calls = %+v, want only slow_check (no further tool after stop)", calls)
	}
	time.Sleep(100 * time.Millisecond) // let the server see the cancellation
	if c := h.k8s.Calls()[0]; !c.Cancelled {
		t.Errorf("slow_check was not cancelled on the server: %+v", c)
	}
	if n := len(h.llm.Requests()); n != 1 {
		t.Fatalf("model calls = %d after stop, want 1", n)
	}
	h.llm.SetResponder(func(llmfake.Request) llmfake.Reply { return text("all good") })
	h.say("status?")
	if next := h.rec.WaitCompleted(t, 2); next.Status != core.RunDone {
		t.Fatalf("next run = %+v", next)
	}
	// The cancelled call was answered, so the provider accepted the transcript.
	req := h.llm.Requests()[1]
	if res := toolResult(t, req, "c1"); !strings.Contains(res, "cancelled") {
		t.Errorf("cancelled call result = %q", res)
	}
}

func TestStopCancelsPendingApprovals(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)))
	h.say("scale")
	a := h.pausedApproval(h.rec, 1)
	h.rec.WaitCompleted(t, 1)
	if !h.eng.Stop(context.Background(), conv) {
		t.Fatal("Stop found nothing to stop")
	}
	denied := h.rec.Wait(t, time.Second, 1, coretest.Of(core.EventToolDenied))
	if denied.Approval.Status != core.ApprovalCancelled {
		t.Fatalf("status = %s, want cancelled", denied.Approval.Status)
	}
	if got, _ := h.store.Approval(context.Background(), a.ID); got.Status != core.ApprovalCancelled {
		t.Fatalf("stored status = %s", got.Status)
	}
	if _, err := h.decide(a.ID, alice, true, ""); err == nil {
		t.Fatal("a cancelled request was approved")
	}
	if done := h.rec.WaitCompleted(t, 2); done.Status != core.RunStopped {
		t.Fatalf("completed = %+v", done)
	}
	if len(h.k8s.Calls()) != 0 {
		t.Fatal("tool ran")
	}
}

func TestNewMessageSupersedesPendingApprovals(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("never mind then"))
	h.say("scale")
	a := h.pausedApproval(h.rec, 1)
	h.rec.WaitCompleted(t, 1)
	h.say("actually, don't")
	denied := h.rec.Wait(t, 5*time.Second, 1, coretest.Of(core.EventToolDenied))
	if denied.Approval.ID != a.ID || denied.Approval.Status != core.ApprovalSuperseded {
		t.Fatalf("tool.denied = %+v, want superseded", denied.Approval)
	}
	done := h.rec.Wait(t, 5*time.Second, 1, func(ev core.Event) bool { return ev.Type == core.EventCompleted && ev.Status == core.RunDone })
	if done.Text != "never mind then" {
		t.Fatalf("completed = %+v", done)
	}
	req := h.llm.Requests()[1]
	if res := toolResult(t, req, "c1"); !strings.Contains(res, "superseded") {
		t.Errorf("model was not told the call did not run: %q", res)
	}
	if len(h.k8s.Calls()) != 0 {
		t.Fatal("tool ran")
	}
}

func TestSteerIsSeenByTheNextModelCall(t *testing.T) {
	h := newHarness(t)
	hold := make(chan struct{})
	h.llm.Push(
		llmfake.Reply{Text: "Checking prod.", Hold: hold, ToolCalls: []llmfake.ToolCall{call("c1", "get_pods", `{"namespace":"prod"}`), call("c2", "get_logs", `{"pod":"web-1"}`)}},
		text("staging looks fine"),
	)
	h.say("check prod")
	h.rec.Wait(t, 5*time.Second, 1, coretest.Of(core.EventToken))
	h.say("actually check staging")
	close(hold)

	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunDone || done.Text != "staging looks fine" {
		t.Fatalf("completed = %+v", done)
	}
	if n := len(h.k8s.Calls()); n != 0 {
		t.Fatalf("%d unstarted calls ran after the steering message", n)
	}
	req := h.llm.Requests()[1]
	for _, id := range []string{"c1", "c2"} {
		if res := toolResult(t, req, id); !strings.Contains(res, "skipped: new user message") {
			t.Errorf("result %s = %q", id, res)
		}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "user" || last.Content != "actually check staging" {
		t.Fatalf("last message of the next model call = %+v, want the steering message", last)
	}
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.llm.Requests()); n != 2 {
		t.Fatalf("model calls = %d, want 2 (steer runs inside the same run)", n)
	}
}

func TestFollowupRunsAfterTheCurrentRun(t *testing.T) {
	h := newHarness(t, withConfig(func(c *core.Config) { c.QueueMode = core.QueueFollowup }))
	hold := make(chan struct{})
	h.llm.Push(llmfake.Reply{Text: "first answer", Hold: hold}, text("second answer"))
	h.say("first")
	h.rec.Wait(t, 5*time.Second, 1, coretest.Of(core.EventToken))
	h.say("second")
	time.Sleep(50 * time.Millisecond)
	if n := len(h.llm.Requests()); n != 1 {
		t.Fatalf("followup started while the first run was active (%d requests)", n)
	}
	close(hold)
	first := h.rec.WaitCompleted(t, 1)
	second := h.rec.WaitCompleted(t, 2)
	if first.Text != "first answer" || second.Text != "second answer" || first.RunID == second.RunID {
		t.Fatalf("runs = %+v / %+v", first, second)
	}
	req := h.llm.Requests()[1]
	if last := req.Messages[len(req.Messages)-1]; last.Content != "second" {
		t.Fatalf("second run's last message = %+v", last)
	}
}

func TestInterruptStopsThenRuns(t *testing.T) {
	h := newHarness(t, withConfig(func(c *core.Config) { c.QueueMode = core.QueueInterrupt }))
	hold := make(chan struct{})
	defer close(hold)
	h.llm.Push(llmfake.Reply{Text: "long answer that will be cut", Hold: hold}, text("new answer"))
	h.say("first")
	h.rec.Wait(t, 5*time.Second, 1, coretest.Of(core.EventToken))
	h.say("forget that, do this")
	first := h.rec.WaitCompleted(t, 1)
	second := h.rec.WaitCompleted(t, 2)
	if first.Status != core.RunStopped || second.Status != core.RunDone || second.Text != "new answer" {
		t.Fatalf("runs = %s / %s %q", first.Status, second.Status, second.Text)
	}
}

func TestMaxIterationsEndsTheRunAndTheConversationStaysUsable(t *testing.T) {
	h := newHarness(t, withConfig(func(c *core.Config) { c.MaxIterations = 3 }))
	n := 0
	h.llm.SetResponder(func(llmfake.Request) llmfake.Reply {
		n++
		return toolCalls(call("loop"+string(rune('a'+n)), "get_pods", `{"namespace":"prod"}`))
	})
	h.say("loop forever")
	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunMaxIterations || !strings.Contains(done.Text, "3 model calls") {
		t.Fatalf("completed = %s %q", done.Status, done.Text)
	}
	if got := len(h.llm.Requests()); got != 3 {
		t.Fatalf("model calls = %d, want 3", got)
	}
	h.llm.SetResponder(nil)
	h.llm.Push(text("still here"))
	h.say("are you there?")
	if next := h.rec.WaitCompleted(t, 2); next.Status != core.RunDone || next.Text != "still here" {
		t.Fatalf("next run = %+v", next)
	}
}

func TestRateLimitIsRetriedAndReported(t *testing.T) {
	h := newHarness(t)
	h.llm.Push(
		llmfake.Reply{Status: 429, RetryAfter: "0", ErrorMessage: "slow down"},
		llmfake.Reply{Status: 429, ErrorMessage: "slow down"},
		text("made it"),
	)
	h.say("hello")
	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunDone || done.Text != "made it" {
		t.Fatalf("completed = %+v", done)
	}
	var limits []core.Event
	for _, ev := range h.rec.Events() {
		if ev.Type == core.EventRateLimit {
			limits = append(limits, ev)
		}
	}
	if len(limits) != 2 || limits[0].Attempt != 1 || limits[1].Attempt != 2 {
		t.Fatalf("rate_limit events = %+v, want attempts 1 and 2", limits)
	}
	assertOrder(t, h.rec.Events(), core.EventRateLimit, core.EventRateLimit, core.EventToken, core.EventCompleted)
}

func TestTransientErrorsExhaustRetriesWithAReadableError(t *testing.T) {
	h := newHarness(t)
	for range 4 {
		h.llm.Push(llmfake.Reply{Status: 503, ErrorMessage: "upstream overloaded"})
	}
	h.say("hello")
	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunError {
		t.Fatalf("completed = %+v", done)
	}
	werr := h.rec.Wait(t, time.Second, 1, coretest.Of(core.EventWorkflowError))
	if !strings.Contains(werr.Error, "503") || !strings.Contains(werr.Error, "upstream overloaded") {
		t.Errorf("workflow.error = %q, want the status and the server's message", werr.Error)
	}
	transients := 0
	for _, ev := range h.rec.Events() {
		if ev.Type == core.EventTransientError {
			transients++
		}
	}
	if transients != 3 || len(h.llm.Requests()) != 4 {
		t.Fatalf("transient_error events = %d, requests = %d; want 3 and 4", transients, len(h.llm.Requests()))
	}
	// The conversation stays usable.
	h.llm.Push(text("back"))
	h.say("again")
	if next := h.rec.WaitCompleted(t, 2); next.Status != core.RunDone {
		t.Fatalf("next = %+v", next)
	}
}

func TestShutdownRefusesNewMessagesWithoutStoringThem(t *testing.T) {
	h := newHarness(t)
	if err := h.eng.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	in := core.Inbound{ConvKey: conv, MessageID: "late-1", User: alice, Text: "hello"}
	if err := h.eng.Handle(context.Background(), in); !errors.Is(err, core.ErrShuttingDown) {
		t.Fatalf("Handle after Shutdown = %v, want ErrShuttingDown", err)
	}
	// After a restart the platform redelivers the message: it must run.
	eng2, rec2 := h.newEngine()
	h.llm.Push(text("processed after restart"))
	if err := eng2.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if done := rec2.WaitCompleted(t, 1); done.Text != "processed after restart" {
		t.Fatalf("completed = %+v", done)
	}
}

func TestRecoverRunsAMessageStoredBeforeACrash(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	in := core.Inbound{ConvKey: conv, MessageID: "tg-7", User: alice, Text: "is prod ok?"}
	// The process stored the message and died before handling it.
	if _, err := h.store.SaveInbound(ctx, in); err != nil {
		t.Fatal(err)
	}
	eng, rec := h.newEngine()
	// The platform's redelivery is a duplicate now...
	if err := eng.Handle(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := eng.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(h.llm.Requests()); n != 0 {
		t.Fatalf("duplicate ran %d model calls", n)
	}
	// ...so recovery at start-up is what runs it, once.
	h.llm.Push(text("prod is fine"))
	n, err := eng.Recover(ctx, func(key string) bool { return strings.HasPrefix(key, "terminal:") })
	if err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v; want 1", n, err)
	}
	if done := rec.WaitCompleted(t, 1); done.Text != "prod is fine" {
		t.Fatalf("completed = %+v", done)
	}
	if n, err := eng.Recover(ctx, nil); err != nil || n != 0 {
		t.Fatalf("second Recover = %d, %v; want nothing left", n, err)
	}
}

func TestStopMarksDroppedMessagesDone(t *testing.T) {
	h := newHarness(t, withConfig(func(c *core.Config) { c.QueueMode = core.QueueFollowup }))
	hold := make(chan struct{})
	defer close(hold)
	h.llm.Push(llmfake.Reply{Text: "working on it", Hold: hold})
	h.say("first")
	h.rec.Wait(t, 5*time.Second, 1, coretest.Of(core.EventToken))
	h.say("queued behind")
	h.eng.Stop(context.Background(), conv)
	h.rec.WaitCompleted(t, 1)
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	pending, err := h.store.PendingInbound(context.Background())
	if err != nil || len(pending) != 0 {
		t.Fatalf("pending after stop = %+v, %v; a stopped queue must not replay after a restart", pending, err)
	}
	if n := len(h.llm.Requests()); n != 1 {
		t.Fatalf("model calls = %d, want 1 (the queued message was dropped by stop)", n)
	}
}

// countingLimiter admits max messages in all.
type countingLimiter struct{ max, n int }

func (l *countingLimiter) Allow(string, time.Time) bool { l.n++; return l.n <= l.max }
func (l *countingLimiter) Limit() int                   { return l.max }

// A message over the run limit is refused before it is stored, with the
// sentence for the person; /stop is never limited.
func TestHandleRefusesOverTheRunLimitWithoutStoring(t *testing.T) {
	lim := &countingLimiter{max: 1}
	h := newHarness(t, withConfig(func(c *core.Config) { c.Limiter = lim }))
	h.llm.Push(text("first answer"))
	h.say("first")
	h.rec.WaitCompleted(t, 1)
	err := h.eng.Handle(context.Background(), core.Inbound{ConvKey: conv, MessageID: "m-over", User: alice, Text: "second"})
	var le *core.LimitError
	if !errors.As(err, &le) || !errors.Is(err, core.ErrRateLimited) || !strings.Contains(err.Error(), "started 1 runs in the last minute") {
		t.Fatalf("Handle over the limit: err = %v, want a LimitError", err)
	}
	first, err := h.store.SaveInbound(context.Background(), core.Inbound{ConvKey: conv, MessageID: "m-over", User: alice, Text: "second"})
	if err != nil || !first {
		t.Errorf("the refused message was stored (SaveInbound again: first %v, %v)", first, err)
	}
	if err := h.eng.Handle(context.Background(), core.Inbound{ConvKey: conv, MessageID: "m-stop", User: alice, Text: "/stop"}); err != nil {
		t.Errorf("/stop over the limit: %v", err)
	}
	if lim.n != 2 {
		t.Errorf("the limiter was asked %d times, want 2 (/stop is not counted)", lim.n)
	}
}

// A conversation idle for ForgetIdleAfter is dropped from memory once its
// events are delivered, and used again it continues in order.
func TestIdleSessionsAreForgottenAndComeBackInOrder(t *testing.T) {
	h := newHarness(t, withConfig(func(c *core.Config) {
		c.ForgetIdleAfter = 50 * time.Millisecond
		c.ExpirySweep = 20 * time.Millisecond
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.eng.Run(ctx)
	h.llm.Push(text("first"), text("second"))
	h.say("one")
	first := h.rec.WaitCompleted(t, 1)
	deadline := time.Now().Add(5 * time.Second)
	for h.eng.Metrics().Sessions != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the idle conversation is still held: %d sessions", h.eng.Metrics().Sessions)
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.say("two")
	second := h.rec.WaitCompleted(t, 2)
	if second.Text != "second" || first.Text != "first" {
		t.Fatalf("answers = %q, %q", first.Text, second.Text)
	}
	// Events of the conversation were delivered in order, each run's
	// numbered upwards, across the forgetting.
	last := map[string]int64{}
	for _, ev := range h.rec.Events() {
		if ev.Seq <= last[ev.RunID] {
			t.Errorf("%s of run %s has seq %d after %d", ev.Type, ev.RunID, ev.Seq, last[ev.RunID])
		}
		last[ev.RunID] = ev.Seq
	}
	if reqs := h.llm.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Raw), "first") {
		t.Errorf("the second run did not see the conversation so far")
	}
}
