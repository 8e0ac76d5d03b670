package core

import (
	"encoding/json"
	"time"
)

// Role is the author of a transcript message.
type Role string

// The roles of a transcript, as in the OpenAI Chat Completions API.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation transcript.
//
// An assistant message may carry ToolCalls; every call must be answered by a
// tool message with the same ToolCallID before the next user message, which the
// engine guarantees (denied, skipped and superseded calls get synthetic results).
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Name is the tool name on tool messages, or the author's display name on user messages.
	Name  string    `json:"name,omitempty"`
	RunID string    `json:"run_id,omitempty"`
	Time  time.Time `json:"time,omitzero"`
}

// ToolCall is a model's request to call a tool. Arguments is the raw JSON the
// model produced; it is untrusted until validated against the tool's schema.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Actor is a person (or the system) acting in a conversation.
type Actor struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// SystemActor is opsgate itself deciding without a person, such as denying
// an approval nobody can answer any more. Only Engine.DenyAsSystem decides
// as it; Decide refuses it, so no adapter can pass it off as a person.
var SystemActor = Actor{ID: "system", Name: "opsgate"}

// String returns the display name, falling back to the id.
func (a Actor) String() string {
	if a.Name != "" {
		return a.Name
	}
	return a.ID
}

// Inbound is a user message as an adapter received it.
type Inbound struct {
	// ConvKey identifies the conversation, e.g. "telegram:<bot>:<chat>".
	ConvKey string
	// MessageID is the platform's id of the message; a redelivery with the same
	// id in the same conversation is processed once. Empty means "no dedupe".
	MessageID string
	User      Actor
	Text      string
	Time      time.Time
	// RunID, when set, is the id of the run that answers the message,
	// chosen before it runs so that a client can name it at once (the
	// HTTP API's Idempotency-Key answers a repeat with it). Such a message
	// always gets a run of its own: it is queued behind an active run
	// rather than steering it. Empty means a new id.
	RunID string
}
