package core_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// noteMemory is a Retriever that finds nothing and keeps the facts of
// compactions.
type noteMemory struct {
	mu    sync.Mutex
	notes []core.Notes
}

func (*noteMemory) Retrieve(context.Context, core.MemoryQuery) (core.MemoryContext, error) {
	return core.MemoryContext{}, nil
}

func (m *noteMemory) SaveNotes(_ context.Context, n core.Notes) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notes = append(m.notes, n)
	return nil
}

// opsModel plays a model through a long incident: every question is
// answered by reading 30 log lines (1,000 every seventh turn), then a
// sentence; compaction and title requests get a summary and a title.
func opsModel(req llmfake.Request) llmfake.Reply {
	first := req.Messages[0].Content
	last := req.Messages[len(req.Messages)-1]
	switch {
	case strings.HasPrefix(first, "You compact an operations chat"):
		return llmfake.Reply{Text: "The user is chasing restarts of payments-api in prod; logs show only health checks so far.\nFACT: payments-api runs in namespace payments"}
	case strings.HasPrefix(first, "Write a title"):
		return llmfake.Reply{Text: "Payments API restarts in prod"}
	case last.Role == "user":
		var turn int
		fmt.Sscanf(last.Content, "turn %d:", &turn)
		tail := 30
		if turn%7 == 0 {
			tail = 1000
		}
		return llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: fmt.Sprintf("c%d", turn), Name: "get_logs",
			Arguments: fmt.Sprintf(`{"pod":"payments-api-1","tail":%d}`, tail)}}}
	default:
		return llmfake.Reply{Text: "The logs show only health checks; nothing failed in this window."}
	}
}

// Acceptance 9: a 60-turn conversation with large tool outputs keeps the
// prompt tokens per call flat — old results are sent as one line and the
// history is compacted — and the compacted summary is in the request.
func TestLongConversationStaysFlat(t *testing.T) {
	mem := &noteMemory{}
	h := newHarness(t, withMemory(mem), withConfig(func(c *core.Config) { c.ContextTokens = 10000 }))
	h.llm.SetResponder(opsModel)
	const turns = 60
	prompt := make([]int64, turns+1) // the prompt tokens of each turn's answering call
	seen := 0
	for turn := 1; turn <= turns; turn++ {
		h.say(fmt.Sprintf("turn %d: are the payments-api pods still restarting?", turn))
		h.rec.WaitCompleted(t, turn)
		evs := h.rec.Events()
		for _, ev := range evs[seen:] {
			if ev.Type == core.EventTokenUsage && ev.Text == "" && ev.Usage != nil {
				prompt[turn] = ev.Usage.PromptTokens // the last call of the turn
			}
		}
		seen = len(evs)
	}
	t.Logf("prompt tokens: turn 10 %d, turn 30 %d, turn 45 %d, turn 60 %d", prompt[10], prompt[30], prompt[45], prompt[60])
	if prompt[60] > prompt[30]*11/10 {
		t.Errorf("prompt tokens grew: turn 60 %d > 1.1 × turn 30 %d", prompt[60], prompt[30])
	}
	peak := func(from, to int) int64 {
		var p int64
		for i := from; i <= to; i++ {
			p = max(p, prompt[i])
		}
		return p
	}
	if late, mid := peak(51, 60), peak(21, 30); late > mid*11/10 {
		t.Errorf("peak prompt tokens grew: turns 51-60 %d > 1.1 × turns 21-30 %d", late, mid)
	}

	reqs := h.llm.Requests()
	last := reqs[len(reqs)-1]
	summary, stale := false, 0
	for _, m := range last.Messages {
		if m.Role == "system" && strings.HasPrefix(m.Content, "Summary of the earlier part of this conversation") {
			summary = true
		}
		if m.Role == "tool" && strings.HasPrefix(m.Content, "[result of get_logs from") {
			stale++
		}
	}
	if !summary {
		t.Error("the last request has no compacted summary")
	}
	if stale == 0 {
		t.Error("no stale tool result was sent as a one-line summary")
	}
	msgs, err := h.store.Messages(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	compactions := 0
	for _, m := range msgs {
		if m.Role == core.RoleSystem && strings.HasPrefix(m.Name, "compaction:") {
			compactions++
		}
		if m.Role == core.RoleTool && !strings.HasPrefix(m.Content, "last ") {
			t.Fatalf("the stored transcript lost a tool result: %.80q", m.Content)
		}
	}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	if compactions == 0 || len(mem.notes) == 0 || mem.notes[0].Facts[0] != "payments-api runs in namespace payments" {
		t.Errorf("compactions stored %d, notes %+v: want the summary stored and its facts kept", compactions, mem.notes)
	}
}

// After three exchanges the conversation gets a model-written title.
func TestTitleAfterThreeExchanges(t *testing.T) {
	h := newHarness(t, withConfig(func(c *core.Config) { c.Titles = true }))
	h.llm.SetResponder(func(req llmfake.Request) llmfake.Reply {
		if strings.HasPrefix(req.Messages[0].Content, "Write a title") {
			return llmfake.Reply{Text: `"Payments API restarts in prod."`}
		}
		return llmfake.Reply{Text: "ok"}
	})
	for i := 1; i <= 3; i++ {
		h.say(fmt.Sprintf("question %d about payments", i))
		h.rec.WaitCompleted(t, i)
	}
	ev := h.rec.Wait(t, 5e9, 2, func(ev core.Event) bool { return ev.Type == core.EventConversationTitle })
	if ev.Text != "Payments API restarts in prod" {
		t.Errorf("title event = %q", ev.Text)
	}
	c, err := h.store.Conversation(context.Background(), conv)
	if err != nil || c.Title != "Payments API restarts in prod" {
		t.Errorf("stored title = %q (%v)", c.Title, err)
	}
}
