package llm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/llm"
)

func TestGenerateStreamsText(t *testing.T) {
	fake := llmfake.New(t)
	const text = "All 12 pods in prod are Running.\n\nNo restarts in the last hour."
	fake.Push(llmfake.Reply{Text: text})
	c := newClient(t, fake, llm.Config{})

	resp, rec, err := generate(t, c, userRequest("how are the pods?"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(rec.deltas) < 5 {
		t.Errorf("got %d deltas, want one per word", len(rec.deltas))
	}
	for i, d := range rec.deltas {
		if d.Text == "" || d.Thinking != "" {
			t.Errorf("delta %d = %+v, want a text fragment", i, d)
		}
	}
	if got, _ := rec.text(); got != text {
		t.Errorf("deltas joined = %q, want %q", got, text)
	}
	want := core.Message{Role: core.RoleAssistant, Content: text}
	if diff := cmp.Diff(want, resp.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if resp.FinishReason != "stop" {
		t.Errorf("finish reason = %q, want stop", resp.FinishReason)
	}
}

func TestGenerateStreamsThinking(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			fake := llmfake.New(t)
			fake.Push(llmfake.Reply{Thinking: "The user wants pods. I should list them.", ThinkingField: field, Text: "Listing pods."})
			c := newClient(t, fake, llm.Config{})

			resp, rec, err := generate(t, c, userRequest("pods?"))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			text, thinking := rec.text()
			if thinking != "The user wants pods. I should list them." || text != "Listing pods." {
				t.Errorf("thinking %q, text %q", thinking, text)
			}
			if rec.deltas[0].Thinking == "" {
				t.Errorf("first delta %+v, want thinking before text", rec.deltas[0])
			}
			if resp.Message.Content != "Listing pods." {
				t.Errorf("content = %q: thinking must not leak into the answer", resp.Message.Content)
			}
		})
	}
}

func TestGenerateReassemblesToolCalls(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{
		Text: "Checking both namespaces.",
		ToolCalls: []llmfake.ToolCall{
			{ID: "call_a", Name: "get_pods", Arguments: `{"namespace":"prod","label_selector":"app=web"}`},
			{ID: "call_b", Name: "get_events", Arguments: `{"namespace":"staging","limit":20}`},
		},
	})
	c := newClient(t, fake, llm.Config{})

	resp, _, err := generate(t, c, userRequest("check prod and staging"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := []core.ToolCall{
		{ID: "call_a", Name: "get_pods", Arguments: json.RawMessage(`{"namespace":"prod","label_selector":"app=web"}`)},
		{ID: "call_b", Name: "get_events", Arguments: json.RawMessage(`{"namespace":"staging","limit":20}`)},
	}
	if diff := cmp.Diff(want, resp.Message.ToolCalls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if resp.Message.Content != "Checking both namespaces." || resp.FinishReason != "tool_calls" {
		t.Errorf("content %q, finish %q", resp.Message.Content, resp.FinishReason)
	}
}

func TestGenerateToolCallArguments(t *testing.T) {
	tests := []struct {
		name string
		args string
		want string
	}{
		{"invalid JSON kept as sent", `{"namespace": "prod"`, `{"namespace": "prod"`},
		{"empty becomes an empty object", ``, `{}`},
		{"unicode split across chunks", `{"msg":"héllo wörld ✓"}`, `{"msg":"héllo wörld ✓"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmfake.New(t)
			fake.Push(llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "call_1", Name: "get_pods", Arguments: tt.args}}})
			c := newClient(t, fake, llm.Config{})
			resp, _, err := generate(t, c, userRequest("pods"))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != tt.want {
				t.Errorf("tool calls = %+v, want arguments %s", resp.Message.ToolCalls, tt.want)
			}
		})
	}
}

func TestGenerateSynthesizesMissingToolCallIDs(t *testing.T) {
	fake := llmfake.New(t)
	calls := []llmfake.ToolCall{{Name: "get_pods", Arguments: `{}`}, {Name: "get_nodes", Arguments: `{}`}}
	fake.Push(llmfake.Reply{ToolCalls: calls}, llmfake.Reply{ToolCalls: calls})
	c := newClient(t, fake, llm.Config{})

	seen := map[string]bool{}
	for range 2 {
		resp, _, err := generate(t, c, userRequest("pods and nodes"))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if len(resp.Message.ToolCalls) != 2 {
			t.Fatalf("got %d tool calls, want 2", len(resp.Message.ToolCalls))
		}
		for _, tc := range resp.Message.ToolCalls {
			if !strings.HasPrefix(tc.ID, "call_") || seen[tc.ID] {
				t.Errorf("id %q: want a fresh call_ id", tc.ID)
			}
			seen[tc.ID] = true
		}
	}
}

func TestGenerateReportsUsage(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Text: "ok", Usage: &llmfake.Usage{Prompt: 1200, Completion: 7, Cached: 1024}})
	c := newClient(t, fake, llm.Config{})

	resp, _, err := generate(t, c, userRequest("hi"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := core.Usage{PromptTokens: 1200, CompletionTokens: 7, CachedPromptTokens: 1024, TotalTokens: 1207}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	if reqs := fake.Requests(); len(reqs) != 1 || !reqs[0].IncludeUsage || !reqs[0].Stream {
		t.Errorf("request must stream with stream_options.include_usage: %+v", reqs)
	}
}

func TestGenerateSendsTranscriptAndTools(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Text: "done"})
	c := newClient(t, fake, llm.Config{})

	req := core.ModelRequest{
		Messages: []core.Message{
			{Role: core.RoleSystem, Content: "You are opsgate."},
			{Role: core.RoleUser, Content: "restart web", Name: "Alice Smith"},
			{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{
				{ID: "call_1", Name: "rollout_restart", Arguments: json.RawMessage(`{"deployment":"web"}`)},
				{ID: "call_2", Name: "get_pods", Arguments: nil},
			}},
			{Role: core.RoleTool, ToolCallID: "call_1", Name: "rollout_restart", Content: "restarted"},
			{Role: core.RoleTool, ToolCallID: "call_2", Name: "get_pods", Content: "3 pods"},
			{Role: core.RoleAssistant, Content: "Restarted web."},
			{Role: core.RoleUser, Content: "thanks"},
		},
		Tools: []core.ToolSchema{
			{Name: "get_pods", Description: "List pods.", Parameters: json.RawMessage(`{"type":"object","properties":{"namespace":{"type":"string","maxLength":63}},"required":["namespace"]}`)},
			{Name: "load_toolset"},
			{Name: "ping", Parameters: json.RawMessage(`{"type":"object"}`)},
		},
	}
	if _, _, err := generate(t, c, req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	got := fake.Requests()[0]
	wantMsgs := []llmfake.Message{
		{Role: "system", Content: "You are opsgate."},
		{Role: "user", Content: "restart web"},
		{Role: "assistant", ToolCalls: []llmfake.ToolCall{
			{ID: "call_1", Name: "rollout_restart", Arguments: `{"deployment":"web"}`},
			{ID: "call_2", Name: "get_pods", Arguments: `{}`},
		}},
		{Role: "tool", ToolCallID: "call_1", Content: "restarted"},
		{Role: "tool", ToolCallID: "call_2", Content: "3 pods"},
		{Role: "assistant", Content: "Restarted web."},
		{Role: "user", Content: "thanks"},
	}
	if diff := cmp.Diff(wantMsgs, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got.Model != "test-model" {
		t.Errorf("model = %q", got.Model)
	}
	wantTools := map[string]string{
		"get_pods":     `{"properties":{"namespace":{"maxLength":63,"type":"string"}},"required":["namespace"],"type":"object"}`,
		"load_toolset": `{"properties":{},"type":"object"}`,
		"ping":         `{"properties":{},"type":"object"}`,
	}
	if len(got.Tools) != len(wantTools) {
		t.Fatalf("got %d tools, want %d", len(got.Tools), len(wantTools))
	}
	for _, tool := range got.Tools {
		if canon := canonical(t, tool.Parameters); canon != wantTools[tool.Name] {
			t.Errorf("tool %s parameters = %s, want %s", tool.Name, canon, wantTools[tool.Name])
		}
	}
	if got.Tools[0].Description != "List pods." {
		t.Errorf("description = %q", got.Tools[0].Description)
	}
}

func TestGenerateRejectsInvalidToolSchema(t *testing.T) {
	fake := llmfake.New(t)
	c := newClient(t, fake, llm.Config{})
	req := userRequest("hi")
	req.Tools = []core.ToolSchema{{Name: "broken", Parameters: json.RawMessage(`["not","an","object"]`)}}
	_, _, err := generate(t, c, req)
	me := modelError(t, err, core.ModelFatal)
	if !strings.Contains(me.Message, "broken") {
		t.Errorf("message %q should name the tool", me.Message)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestGenerateSendsReasoningEffortAndMaxTokens(t *testing.T) {
	fake := llmfake.New(t)
	fake.Push(llmfake.Reply{Text: "a"}, llmfake.Reply{Text: "b"})

	_, _, err := generate(t, newClient(t, fake, llm.Config{ReasoningEffort: "low", MaxTokens: 256}), userRequest("hi"))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if _, _, err := generate(t, newClient(t, fake, llm.Config{}), userRequest("hi")); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	reqs := fake.Requests()
	if reqs[0].ReasoningEffort != "low" || reqs[0].MaxTokens != 256 {
		t.Errorf("reasoning effort %q, max tokens %d; want low, 256", reqs[0].ReasoningEffort, reqs[0].MaxTokens)
	}
	// Ollama reads only max_tokens.
	if !hasKey(t, reqs[0].Raw, "max_tokens") || hasKey(t, reqs[0].Raw, "max_completion_tokens") {
		t.Errorf("a non-OpenAI endpoint must get max_tokens: %s", reqs[0].Raw)
	}
	for _, key := range []string{"reasoning_effort", "max_tokens", "max_completion_tokens"} {
		if hasKey(t, reqs[1].Raw, key) {
			t.Errorf("unset option sent as %s: %s", key, reqs[1].Raw)
		}
	}
}

func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("parameters %s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func hasKey(t *testing.T, body []byte, key string) bool {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request body: %v", err)
	}
	_, ok := m[key]
	return ok
}
