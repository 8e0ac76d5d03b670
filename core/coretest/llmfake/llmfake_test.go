package llmfake_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

func post(t *testing.T, s *llmfake.Server, body string) *http.Response {
	t.Helper()
	res, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// events reads the data lines of an SSE body.
func events(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not an SSE data line", line)
		}
		out = append(out, data)
	}
	return out
}

type wireChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func TestStreamWireFormat(t *testing.T) {
	s := llmfake.New(t)
	s.Push(llmfake.Reply{
		Text:      "Two pods  are\npending.",
		ToolCalls: []llmfake.ToolCall{{ID: "call_1", Name: "get_pods", Arguments: `{"namespace":"prod"}`}},
		Usage:     &llmfake.Usage{Prompt: 50, Completion: 9, Cached: 32},
	})
	res := post(t, s, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	evs := events(t, res.Body)
	if evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", evs[len(evs)-1])
	}
	var text, args strings.Builder
	var finish []string
	argChunks := 0
	for i, ev := range evs[:len(evs)-1] {
		var c wireChunk
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("event %d %q: %v", i, ev, err)
		}
		if c.ID != "chatcmpl-llmfake-1" || c.Object != "chat.completion.chunk" {
			t.Errorf("event %d: id %q object %q", i, c.ID, c.Object)
		}
		last := i == len(evs)-2
		if last != (len(c.Choices) == 0) {
			t.Errorf("event %d: %d choices; only the usage chunk has none", i, len(c.Choices))
		}
		if last && (c.Usage == nil || c.Usage.PromptTokens != 50 || c.Usage.PromptTokensDetails.CachedTokens != 32) {
			t.Errorf("usage chunk %s", ev)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				text.WriteString(*ch.Delta.Content)
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Name == "" {
					argChunks++
				}
				args.WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != nil {
				finish = append(finish, *ch.FinishReason)
			}
		}
	}
	if text.String() != "Two pods  are\npending." || args.String() != `{"namespace":"prod"}` {
		t.Errorf("text %q, arguments %q", text.String(), args.String())
	}
	if argChunks < 3 {
		t.Errorf("arguments in %d chunks, want >= 3", argChunks)
	}
	if len(finish) != 1 || finish[0] != "tool_calls" {
		t.Errorf("finish reasons %v, want one tool_calls", finish)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || !reqs[0].Stream || !reqs[0].IncludeUsage || reqs[0].Messages[0].Content != "hi" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestNoScriptedReply(t *testing.T) {
	s := llmfake.New(t)
	s.Push(llmfake.Reply{Text: "one"})
	post(t, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"1"}]}`)
	res := post(t, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"2"}]}`)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 500 || !strings.Contains(string(body), "llmfake: no scripted reply for request 2") {
		t.Errorf("got %d %s", res.StatusCode, body)
	}
}

func TestRejectsUnansweredToolCalls(t *testing.T) {
	s := llmfake.New(t)
	s.Push(llmfake.Reply{Text: "never sent"})
	res := post(t, s, `{"model":"m","stream":true,"messages":[
		{"role":"user","content":"restart"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"restart","arguments":"{}"}}]},
		{"role":"user","content":"well?"}]}`)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 400 || !strings.Contains(string(body), "call_1") {
		t.Errorf("got %d %s, want 400 naming call_1", res.StatusCode, body)
	}
	if got := s.WaitRequests(1, time.Second); len(got) != 1 {
		t.Errorf("rejected request not recorded: %d", len(got))
	}
}

func TestModels(t *testing.T) {
	s := llmfake.New(t)
	res, err := http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || list.Object != "list" || len(list.Data) == 0 {
		t.Errorf("models: %+v, %v", list, err)
	}
}

func TestCloseEndsHeldStream(t *testing.T) {
	s := llmfake.NewServer()
	s.Push(llmfake.Reply{Text: "held forever", Hold: make(chan struct{})})
	res := post(t, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	r := bufio.NewReader(res.Body)
	if _, err := r.ReadString('\n'); err != nil { // the role chunk
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a held stream")
	}
}
