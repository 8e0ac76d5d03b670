package llmfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Request is a chat request as the server received it.
type Request struct {
	Model    string
	Messages []Message
	Tools    []Tool
	// ReasoningEffort is reasoning_effort, "" when absent.
	ReasoningEffort string
	// MaxTokens is max_completion_tokens, else max_tokens, 0 when absent.
	// Raw tells which of the two was sent.
	MaxTokens int
	Stream    bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// Header is the request's HTTP header (Authorization and the like).
	Header http.Header
	// Raw is the request body as received.
	Raw []byte
	// Received is when the request reached the handler, before its body was
	// read: the moment the model would start working on it (benchmarks
	// measure latency up to here).
	Received time.Time
}

// Message is one message of a request. Content of a multi-part message is
// its text parts concatenated.
type Message struct {
	Role       string
	Content    string
	ToolCallID string
	ToolCalls  []ToolCall
}

// Tool is a function tool offered to the model.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

type wireRequest struct {
	Model               string        `json:"model"`
	Messages            []wireMessage `json:"messages"`
	Tools               []wireTool    `json:"tools"`
	ReasoningEffort     string        `json:"reasoning_effort"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	Stream              bool          `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// decodeRequest decodes a chat request body. The error is written for the
// client, as OpenAI would phrase it.
func decodeRequest(body []byte, h http.Header) (Request, error) {
	req := Request{Raw: body, Header: h}
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return req, invalidf("We could not parse the JSON body of your request: %v", err)
	}
	req.Model = w.Model
	req.ReasoningEffort = w.ReasoningEffort
	req.Stream = w.Stream
	req.IncludeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	switch {
	case w.MaxCompletionTokens != nil:
		req.MaxTokens = *w.MaxCompletionTokens
	case w.MaxTokens != nil:
		req.MaxTokens = *w.MaxTokens
	}
	for i, m := range w.Messages {
		content, err := messageText(m.Content)
		if err != nil {
			return req, invalidf("Invalid 'messages[%d].content': %v", i, err)
		}
		msg := Message{Role: m.Role, Content: content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	for i, t := range w.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return req, invalidf("Invalid 'tools[%d]': want a function tool with a name", i)
		}
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	if req.Model == "" {
		return req, invalidf("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return req, invalidf("'messages' must contain at least one message")
	}
	return req, validateTranscript(req.Messages)
}

// messageText reads content given as a string, null, or an array of parts.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", invalidf("want a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// validateTranscript enforces OpenAI's rule that the tool calls of an
// assistant message are answered by tool messages, one per call id, before
// anything else, and that tool messages answer only such calls.
func validateTranscript(msgs []Message) error {
	var pending []string // unanswered call ids of the open batch
	open := false        // a batch of tool calls is being answered
	unanswered := func() error {
		return invalidf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(pending, ", "))
	}
	for i, m := range msgs {
		switch m.Role {
		case "system", "developer", "user", "assistant":
		case "tool":
			at := -1
			for j, id := range pending {
				if id == m.ToolCallID {
					at = j
				}
			}
			if !open || at < 0 {
				return invalidf("Invalid parameter: messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			pending = append(pending[:at], pending[at+1:]...)
			continue
		default:
			return invalidf("Invalid value for 'messages[%d].role': %q", i, m.Role)
		}
		if len(pending) > 0 {
			return unanswered()
		}
		open = false
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			open = true
			for _, tc := range m.ToolCalls {
				pending = append(pending, tc.ID)
			}
		}
	}
	if len(pending) > 0 {
		return unanswered()
	}
	return nil
}

// invalidRequest is a 400 answer, worded as OpenAI words it.
type invalidRequest struct{ msg string }

func (e *invalidRequest) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &invalidRequest{msg: fmt.Sprintf(format, args...)}
}
