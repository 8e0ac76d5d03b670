package llm

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/opsgate/opsgate/core"
)

// answer accumulates a streamed completion. The library's accumulator is not
// used: it drops chunks whose id differs from the first (some servers give
// the usage chunk its own id) and it cannot see reasoning fields.
type answer struct {
	output  bool // text, reasoning or a tool call has been streamed
	tokens  int  // fragments of text, reasoning and tool calls streamed
	content strings.Builder
	calls   []*callBuilder
	byIndex map[int64]*callBuilder
	finish  string
	usage   core.Usage
}

type callBuilder struct {
	id, name string
	args     strings.Builder
}

// add takes one chunk, streaming its text and reasoning to onDelta.
func (a *answer) add(ch openai.ChatCompletionChunk, onDelta func(core.Delta)) error {
	if ch.JSON.Object.Raw() == `"error"` {
		// vLLM-style error object sent as a plain chunk.
		msg, _ := serverMessage([]byte(ch.RawJSON()))
		return fatalf("the model server reported an error while streaming: %s", msg)
	}
	if ch.JSON.Usage.Valid() {
		u := ch.Usage
		a.usage = core.Usage{
			PromptTokens:       u.PromptTokens,
			CompletionTokens:   u.CompletionTokens,
			CachedPromptTokens: u.PromptTokensDetails.CachedTokens,
			TotalTokens:        u.TotalTokens,
		}
		if a.usage.TotalTokens == 0 {
			a.usage.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 { // one choice is requested; others would be noise
			continue
		}
		d := choice.Delta
		if t := reasoning(d); t != "" {
			a.output = true
			a.tokens++
			onDelta(core.Delta{Thinking: t})
		}
		// A refusal is the model's answer too; show it as text.
		for _, t := range []string{d.Content, d.Refusal} {
			if t != "" {
				a.output = true
				a.tokens++
				a.content.WriteString(t)
				onDelta(core.Delta{Text: t})
			}
		}
		for _, tc := range d.ToolCalls {
			a.output = true
			a.tokens++
			a.addToolCall(tc)
		}
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
		}
	}
	return nil
}

// addToolCall appends a fragment to its call. Calls are kept apart by index;
// a new id at a known index also starts a new call, for servers that number
// every call 0.
func (a *answer) addToolCall(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIndex == nil {
		a.byIndex = map[int64]*callBuilder{}
	}
	b := a.byIndex[tc.Index]
	if b == nil || (tc.ID != "" && b.id != "" && tc.ID != b.id) {
		b = &callBuilder{}
		a.calls = append(a.calls, b)
		a.byIndex[tc.Index] = b
	}
	if b.id == "" {
		b.id = tc.ID
	}
	if b.name == "" {
		b.name = tc.Function.Name
	}
	b.args.WriteString(tc.Function.Arguments)
}

// reasoning reads the reasoning fragment that DeepSeek and vLLM send as
// reasoning_content and Ollama and OpenRouter as reasoning.
func reasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		// Unknown fields are never Valid() in this library; Raw has the JSON.
		raw := d.JSON.ExtraFields[key].Raw()
		if raw == "" || raw == "null" {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// response builds the final answer. A stream that ended without a
// finish_reason was cut off (every server we know sends one), so it is not
// passed off as a complete answer.
func (a *answer) response() (core.ModelResponse, error) {
	if a.finish == "" {
		e := fatalf("the model server ended the stream before the answer was complete")
		if !a.output {
			e.Kind = core.ModelTransient
			e.Message = "the model server closed the stream without an answer"
		}
		return core.ModelResponse{}, e
	}
	msg := core.Message{Role: core.RoleAssistant, Content: a.content.String()}
	for _, b := range a.calls {
		id := b.id
		if id == "" {
			id = newCallID()
		}
		args := b.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		// Invalid JSON is kept as sent: the engine validates it and tells the
		// model what is wrong.
		msg.ToolCalls = append(msg.ToolCalls, core.ToolCall{ID: id, Name: b.name, Arguments: json.RawMessage(args)})
	}
	return core.ModelResponse{Message: msg, Usage: a.usage, FinishReason: a.finish}, nil
}

// newCallID makes an id for a tool call the server sent without one, so that
// the tool result can refer to it.
func newCallID() string {
	var b [12]byte
	rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
