package llmfake_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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

const chatBody = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`

// postWithin posts a chat request that the client gives up on after d.
func postWithin(t *testing.T, s *llmfake.Server, d time.Duration) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/chat/completions", strings.NewReader(chatBody))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		t.Cleanup(func() { res.Body.Close() })
	}
	return res, err
}

func TestSilentServers(t *testing.T) {
	const patience = 300 * time.Millisecond
	t.Run("never answers", func(t *testing.T) {
		s := llmfake.New(t)
		s.Push(llmfake.Reply{Text: "never sent", NeverAnswer: true})
		if res, err := postWithin(t, s, patience); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, %v; want no response at all", res, err)
		}
		if n := len(s.Requests()); n != 1 {
			t.Errorf("%d requests recorded, want 1", n)
		}
	})
	t.Run("stalls after the headers", func(t *testing.T) {
		s := llmfake.New(t)
		s.Push(llmfake.Reply{Text: "never sent", StallAfterHeaders: true})
		res, err := postWithin(t, s, patience)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("got %d %s, want the event-stream headers", res.StatusCode, res.Header.Get("Content-Type"))
		}
		if body, err := io.ReadAll(res.Body); len(body) != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("body %q, %v; want nothing until the client gives up", body, err)
		}
	})
	t.Run("stalls after three tokens", func(t *testing.T) {
		s := llmfake.New(t)
		s.Push(llmfake.Reply{Text: "Scaling web to five replicas now", StallAfterTokens: 3})
		res, err := postWithin(t, s, patience)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("read: %v, want the stream to hang until the client gives up", err)
		}
		var text strings.Builder
		for _, ev := range events(t, strings.NewReader(string(body))) {
			var c wireChunk
			if err := json.Unmarshal([]byte(ev), &c); err != nil {
				t.Fatalf("event %q: %v", ev, err)
			}
			for _, ch := range c.Choices {
				if ch.FinishReason != nil {
					t.Errorf("a stalled stream sent finish_reason %q", *ch.FinishReason)
				}
				if ch.Delta.Content != nil {
					text.WriteString(*ch.Delta.Content)
				}
			}
		}
		if text.String() != "Scaling web to " {
			t.Errorf("streamed %q, want the first three words", text.String())
		}
	})
}

func TestHTMLAndCodedErrors(t *testing.T) {
	s := llmfake.New(t)
	const page = "<!DOCTYPE html><html><head><title>Sign in</title></head><body>Sign in to continue</body></html>"
	s.Push(
		llmfake.Reply{HTML: page},
		llmfake.Reply{Status: 502, HTML: "<html><body><h1>502 Bad Gateway</h1></body></html>"},
		llmfake.Reply{Status: 404, ErrorCode: "model_not_found", ErrorMessage: "The model `gpt-9` does not exist or you do not have access to it."},
	)
	tests := []struct {
		status      int
		contentType string
		body        string
	}{
		{200, "text/html; charset=utf-8", page},
		{502, "text/html; charset=utf-8", "<html><body><h1>502 Bad Gateway</h1></body></html>"},
		{404, "application/json", `{"error":{"code":"model_not_found","message":"The model ` + "`gpt-9`" + ` does not exist or you do not have access to it.","param":null,"type":"invalid_request_error"}}`},
	}
	for _, tt := range tests {
		res := post(t, s, chatBody)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != tt.status || res.Header.Get("Content-Type") != tt.contentType || string(body) != tt.body {
			t.Errorf("got %d %s %s\nwant %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body, tt.status, tt.contentType, tt.body)
		}
	}
}
