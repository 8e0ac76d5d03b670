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

func (m *fixedMemory) Retrieve(_ context.Context, _, query string, budget int) (core.MemoryContext, error) {
	m.queries = append(m.queries, query)
	return m.mc, m.err
}

func TestMemoryIsAnAdditionalSystemMessage(t *testing.T) {
	mem := &fixedMemory{mc: core.MemoryContext{Trusted: "runbook: checkout 502s mean the payments pool is exhausted", Untrusted: "draft: maybe DNS", Hits: 2}}
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
	if !hasType(h.rec.Events(), core.EventMemoryContextLoaded) {
		t.Error("no memory.context.loaded event")
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
