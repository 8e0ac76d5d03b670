package core

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Model streams one chat completion. Implementations live outside core
// (core/llm speaks to any OpenAI-compatible endpoint).
type Model interface {
	// Generate sends req and streams the answer. onDelta is called, from the
	// calling goroutine, for every text or reasoning fragment as it arrives.
	// It returns the complete assistant message (with any tool calls, whose
	// arguments were reassembled from their fragments) and the usage.
	//
	// Errors that the engine may retry are *ModelError with Kind
	// ModelRateLimited or ModelTransient; a cancelled ctx returns ctx.Err().
	// Implementations must not retry by themselves: the engine retries and
	// reports each retry to the user.
	Generate(ctx context.Context, req ModelRequest, onDelta func(Delta)) (ModelResponse, error)
}

// ModelRequest is the input of one model call.
type ModelRequest struct {
	Messages []Message
	Tools    []ToolSchema
}

// ToolSchema is a tool as the model sees it.
type ToolSchema struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object.
	Parameters json.RawMessage
}

// Delta is a streamed fragment of the model's answer.
type Delta struct {
	Text     string
	Thinking string
}

// ModelResponse is the model's complete answer to one call.
type ModelResponse struct {
	// Message has Role assistant, the full Content and the ToolCalls.
	Message      Message
	Usage        Usage
	FinishReason string
}

// Usage is token accounting as reported by the provider.
type Usage struct {
	PromptTokens       int64 `json:"prompt_tokens"`
	CompletionTokens   int64 `json:"completion_tokens"`
	CachedPromptTokens int64 `json:"cached_prompt_tokens"`
	TotalTokens        int64 `json:"total_tokens"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.PromptTokens += u2.PromptTokens
	u.CompletionTokens += u2.CompletionTokens
	u.CachedPromptTokens += u2.CachedPromptTokens
	u.TotalTokens += u2.TotalTokens
}

// ModelErrorKind classifies model failures for the engine's retry policy.
type ModelErrorKind string

// Model error kinds.
const (
	// ModelRateLimited is an HTTP 429: retried with backoff up to 60 s.
	ModelRateLimited ModelErrorKind = "rate_limited"
	// ModelTransient is a timeout, a dropped connection before any output,
	// or a 502/503/504: retried with backoff up to 30 s.
	ModelTransient ModelErrorKind = "transient"
	// ModelFatal is anything else (bad request, auth, a garbled stream).
	ModelFatal ModelErrorKind = "fatal"
)

// ModelError is a classified failure of a model call.
type ModelError struct {
	Kind       ModelErrorKind
	StatusCode int           // HTTP status, 0 when there was none
	RetryAfter time.Duration // server's hint, 0 when absent
	Message    string        // readable, safe to show to a user
	Err        error
}

func (e *ModelError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("model: %s (HTTP %d): %s", e.Kind, e.StatusCode, e.Message)
	}
	return fmt.Sprintf("model: %s: %s", e.Kind, e.Message)
}

func (e *ModelError) Unwrap() error { return e.Err }
