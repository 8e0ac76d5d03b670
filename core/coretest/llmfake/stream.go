package llmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

const (
	fingerprint = "fp_llmfake"
	// garbage is a chunk cut off in the middle of a JSON object.
	garbage = `{"id":"chatcmpl-llmfake","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tru`
)

// stream writes one reply as server-sent events, the way OpenAI does.
type stream struct {
	w       http.ResponseWriter
	req     Request
	reply   Reply
	id      string
	created int64
	done    <-chan struct{}
	ctx     context.Context

	sent   int  // chunks written; TokenDelay comes before all but the first
	tokens int  // token chunks written (text, thinking, tool calls), for the usage estimate
	held   bool // Hold has been waited for
}

type chunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []chunkChoice   `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type delta struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	Reasoning        string          `json:"reasoning,omitempty"`
	ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// run streams the reply. It returns early, without [DONE], when the client
// goes away, the server closes, or the reply scripts a failure.
func (st *stream) run() {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	st.w.WriteHeader(http.StatusOK)
	st.flush()
	if st.reply.StallAfterHeaders {
		waitGone(st.ctx, st.done)
		return
	}

	if !st.sleep(st.reply.FirstTokenDelay) {
		return
	}
	empty := ""
	if !st.send(delta{Role: "assistant", Content: &empty}, nil, false) {
		return
	}
	for _, w := range splitWords(st.reply.Thinking) {
		d := delta{ReasoningContent: w}
		if st.reply.ThinkingField == "reasoning" {
			d = delta{Reasoning: w}
		}
		if !st.send(d, nil, true) {
			return
		}
	}
	words := splitWords(st.reply.Text)
	if st.reply.SplitChars > 0 {
		words = splitChars(st.reply.Text, st.reply.SplitChars)
	}
	errorAt := max(1, len(words)/2)
	for i, w := range words {
		if !st.send(delta{Content: &w}, nil, true) {
			return
		}
		if st.reply.Garbage && i == 0 {
			st.data(garbage)
			st.data("[DONE]")
			return
		}
		if st.reply.MidStreamError != "" && i+1 == errorAt {
			st.streamError()
			return
		}
	}
	if st.reply.Garbage { // no text: the garbage comes first
		st.data(garbage)
		st.data("[DONE]")
		return
	}
	if st.reply.MidStreamError != "" {
		st.streamError()
		return
	}
	for i, tc := range st.reply.ToolCalls {
		head := toolCallDelta{Index: i, ID: tc.ID, Type: "function"}
		head.Function.Name = tc.Name
		if !st.send(delta{ToolCalls: []toolCallDelta{head}}, nil, true) {
			return
		}
		for _, frag := range splitArguments(tc.Arguments) {
			d := toolCallDelta{Index: i}
			d.Function.Arguments = frag
			if !st.send(delta{ToolCalls: []toolCallDelta{d}}, nil, true) {
				return
			}
		}
	}
	if !st.held && !st.hold() { // a reply with no tokens holds after the role chunk
		return
	}
	finish := "stop"
	if len(st.reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if !st.send(delta{}, &finish, false) {
		return
	}
	if st.req.IncludeUsage {
		u, _ := json.Marshal(usageFor(st.req, st.reply, st.tokens))
		c := st.chunk()
		c.Choices = []chunkChoice{}
		c.Usage = u
		if !st.write(c) {
			return
		}
	}
	st.data("[DONE]")
}

func (st *stream) chunk() chunk {
	c := chunk{ID: st.id, Object: "chat.completion.chunk", Created: st.created, Model: st.req.Model, SystemFingerprint: fingerprint}
	if st.req.IncludeUsage {
		// OpenAI sends "usage": null on every chunk but the last when asked
		// for usage; clients must not take it for a zero usage.
		c.Usage = json.RawMessage("null")
	}
	return c
}

// send writes one choice chunk, after TokenDelay when it is not the first,
// and waits on Hold after the first token chunk.
func (st *stream) send(d delta, finish *string, token bool) bool {
	if st.sent > 0 && !st.sleep(st.reply.TokenDelay) {
		return false
	}
	c := st.chunk()
	c.Choices = []chunkChoice{{Index: 0, Delta: d, FinishReason: finish}}
	if !st.write(c) {
		return false
	}
	if token {
		st.tokens++
		if st.tokens == st.reply.StallAfterTokens {
			waitGone(st.ctx, st.done)
			return false
		}
		if !st.held {
			return st.hold()
		}
	}
	return true
}

func (st *stream) hold() bool {
	st.held = true
	if st.reply.Hold == nil {
		return true
	}
	select {
	case <-st.reply.Hold:
		return true
	case <-st.ctx.Done():
	case <-st.done:
	}
	return false
}

func (st *stream) streamError() {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": st.reply.MidStreamError, "type": "server_error", "param": nil, "code": nil,
	}})
	st.data(string(b))
}

func (st *stream) write(c chunk) bool {
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("llmfake: encode chunk: %v", err))
	}
	st.sent++
	return st.data(string(b))
}

// data writes one event and flushes it; false when the client is gone.
func (st *stream) data(payload string) bool {
	if st.ctx.Err() != nil {
		return false
	}
	if _, err := fmt.Fprintf(st.w, "data: %s\n\n", payload); err != nil {
		return false
	}
	return st.flush()
}

func (st *stream) flush() bool {
	if err := http.NewResponseController(st.w).Flush(); err != nil {
		return false
	}
	return true
}

// waitGone blocks until the client goes away (ctx) or the server closes
// (done).
func waitGone(ctx context.Context, done <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-done:
	}
}

// sleep waits d; false when the client went away or the server closed.
func (st *stream) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-st.done:
			return false
		default:
			return st.ctx.Err() == nil
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-st.ctx.Done():
	case <-st.done:
	}
	return false
}

type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// usageFor returns the scripted usage, or an estimate from the request and
// the number of token fragments sent.
func usageFor(req Request, reply Reply, tokens int) usageJSON {
	var u usageJSON
	if reply.Usage != nil {
		u.PromptTokens, u.CompletionTokens = reply.Usage.Prompt, reply.Usage.Completion
		u.PromptTokensDetails.CachedTokens = reply.Usage.Cached
	} else {
		chars := 0
		for _, m := range req.Messages {
			chars += len(m.Content)
		}
		u.PromptTokens, u.CompletionTokens = chars/4+1, tokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}
