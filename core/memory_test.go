package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
)

type fixedMemory struct {
	mc      core.MemoryContext
	err     error
	queries []string
}

func (m *fixedMemory) Retrieve(_ context.Context, q core.MemoryQuery) (core.MemoryContext, error) {
	m.queries = append(m.queries, q.Text)
	return m.mc, m.err
}

func TestMemoryIsAnAdditionalSystemMessage(t *testing.T) {
	mem := &fixedMemory{mc: core.MemoryContext{
		Text: "<memory_context>\nrunbook: checkout 502s mean the payments pool is exhausted\n</memory_context>\n<untrusted_memory_candidates>\ndraft: maybe DNS\n</untrusted_memory_candidates>",
		Refs: []core.MemoryRef{{ID: "d1", Path: "checkout/502.md", Type: "runbook", Trust: "admin_approved", Trusted: true}, {ID: "d2", Path: "dns.md", Type: "conversation_note", Trust: "agent_draft"}},
	}}
	h := newHarness(t, withMemory(mem))
	h.llm.Push(text("It is the payments pool."))
	h.say("why is checkout returning 502s?")
	h.rec.WaitCompleted(t, 1)

	req := h.llm.Requests()[0]
	if req.Messages[0].Role != "system" || req.Messages[0].Content != "You are opsgate." {
		t.Fatalf("base system prompt replaced: %+v", req.Messages[0])
	}
	mc := req.Messages[1]
	if mc.Role != "system" || !strings.Contains(mc.Content, "<memory_context>\nrunbook: checkout") ||
		!strings.Contains(mc.Content, "<untrusted_memory_candidates>\ndraft: maybe DNS") {
		t.Fatalf("memory message = %+v", mc)
	}
	if len(mem.queries) != 1 || mem.queries[0] != "why is checkout returning 502s?" {
		t.Errorf("queries = %q, want the latest user message", mem.queries)
	}
	var loaded *core.Event
	for _, ev := range h.rec.Events() {
		if ev.Type == core.EventMemoryContextLoaded {
			loaded = &ev
		}
	}
	if loaded == nil || len(loaded.Memory) != 2 || loaded.Memory[0].Path != "checkout/502.md" {
		t.Errorf("memory.context.loaded = %+v, want both documents named", loaded)
	}
}

// The memory of a turn is in every model call of that turn, once, and in
// none of the next turn's unless retrieved again; the transcript never
// holds it.
func TestMemoryIsPerTurnAndNeverStored(t *testing.T) {
	mem := &fixedMemory{mc: core.MemoryContext{Text: "<memory_context>\nrunbook X\n</memory_context>", Refs: []core.MemoryRef{{ID: "d1", Path: "x.md"}}}}
	h := newHarness(t, withMemory(mem))
	h.llm.Push(toolCalls(call("c1", "get_pods", `{"namespace":"payments"}`)), text("first answer"))
	h.say("why is payments down?")
	h.rec.WaitCompleted(t, 1)
	mem.mc = core.MemoryContext{}
	h.llm.Push(text("second answer"))
	h.say("thanks")
	h.rec.WaitCompleted(t, 2)

	reqs := h.llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	count := func(r int) int {
		n := 0
		for _, m := range reqs[r].Messages {
			n += strings.Count(m.Content, "runbook X")
		}
		return n
	}
	if count(0) != 1 || count(1) != 1 {
		t.Errorf("memory in the turn's calls: %d and %d times, want once each", count(0), count(1))
	}
	if count(2) != 0 {
		t.Errorf("memory of the first turn carried into the second: %d times", count(2))
	}
	msgs, err := h.store.Messages(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if strings.Contains(m.Content, "runbook X") {
			t.Errorf("memory stored in the transcript: %+v", m)
		}
	}
}

func TestMemoryFailureDoesNotFailTheRun(t *testing.T) {
	h := newHarness(t, withMemory(&fixedMemory{err: errors.New("index unavailable")}))
	h.llm.Push(text("answer without memory"))
	h.say("hello")
	if done := h.rec.WaitCompleted(t, 1); done.Status != core.RunDone {
		t.Fatalf("completed = %+v", done)
	}
	if n := len(h.llm.Requests()[0].Messages); n != 2 {
		t.Errorf("request has %d messages, want system prompt and the user message", n)
	}
}

// A run resumed after an approval is still the same turn: the model calls
// after the decision carry the turn's memory too, once.
func TestMemoryAfterApprovalResume(t *testing.T) {
	mem := &fixedMemory{mc: core.MemoryContext{Text: "<memory_context>\nrunbook: scale web slowly\n</memory_context>", Refs: []core.MemoryRef{{ID: "d1", Path: "web/scale.md"}}}}
	h := newHarness(t, withMemory(mem))
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("web runs 3 replicas."))
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	if _, err := h.decide(a.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	h.rec.WaitCompleted(t, 2)
	reqs := h.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	for i, r := range reqs {
		n := 0
		for _, m := range r.Messages {
			n += strings.Count(m.Content, "runbook: scale web slowly")
		}
		if n != 1 {
			t.Errorf("call %d carries the turn's memory %d times, want once", i+1, n)
		}
	}
}
