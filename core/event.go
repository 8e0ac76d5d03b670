package core

import (
	"context"
	"encoding/json"
	"time"
)

// EventType names an event of a run. The names are part of the public contract.
type EventType string

// The event vocabulary (docs/design.md §5).
const (
	EventReady                   EventType = "ready"
	EventGenerationStart         EventType = "generation.start"
	EventTTFT                    EventType = "ttft"
	EventThinking                EventType = "thinking"
	EventThinkingComplete        EventType = "thinking.complete"
	EventToken                   EventType = "token"
	EventTokenUsage              EventType = "token.usage"
	EventGenerationComplete      EventType = "generation.complete"
	EventToolsPending            EventType = "tools.pending"
	EventToolAwaitingApproval    EventType = "tool.awaiting_approval"
	EventToolApproved            EventType = "tool.approved"
	EventToolDenied              EventType = "tool.denied"
	EventToolExecuting           EventType = "tool.executing"
	EventToolProgress            EventType = "tool.progress"
	EventToolResult              EventType = "tool.result"
	EventToolError               EventType = "tool.error"
	EventRateLimit               EventType = "rate_limit"
	EventTransientError          EventType = "transient_error"
	EventMemoryContextLoaded     EventType = "memory.context.loaded"
	EventMemorySearch            EventType = "memory.search"
	EventMemoryWriteCreated      EventType = "memory.write.created"
	EventMemoryWriteBlocked      EventType = "memory.write.blocked"
	EventMemoryPolicyDenied      EventType = "memory.policy.denied"
	EventMemoryPromotionProposed EventType = "memory.promotion.proposed"
	EventMemorySafetyFlagged     EventType = "memory.safety.flagged"
	EventCompleted               EventType = "completed"
	EventWorkflowError           EventType = "workflow.error"
	EventConversationTitle       EventType = "conversation.title.generated"
	// EventGap is never emitted: the event log keeps it in place of events
	// it had to drop while the store was down (docs/design.md §16), so that a
	// stream replaying from the store says what it cannot have (`event:
	// gap`) instead of skipping it silently. Its Seq is Gap.To.
	EventGap EventType = "gap"
)

// Event is one step of a run, delivered in order to an EventSender.
// Which optional fields are set depends on Type (see the constants' users in
// engine code and docs/design.md §5).
type Event struct {
	Type    EventType `json:"type"`
	ConvKey string    `json:"conv_key"`
	RunID   string    `json:"run_id"`
	// Seq increases with each event of a conversation, across its runs,
	// pauses, resumes and processes (the store issues the numbers, in
	// blocks: some are skipped, none is given twice). It is the id of the
	// event in the API's streams.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`

	// Text: token and thinking fragments; the full answer on
	// generation.complete and completed; the message of workflow.error.
	Text string `json:"text,omitempty"`
	// Call: the tool call of tool.* events.
	Call *CallInfo `json:"call,omitempty"`
	// Calls: the batch of tools.pending.
	Calls []CallInfo `json:"calls,omitempty"`
	// Approval: tool.awaiting_approval, tool.approved, tool.denied.
	Approval *Approval `json:"approval,omitempty"`
	// Usage: token.usage (this call) and completed (the whole run).
	Usage *Usage `json:"usage,omitempty"`
	// Status: completed.
	Status RunStatus `json:"status,omitempty"`
	// Attempt and RetryAfter: rate_limit and transient_error.
	Attempt    int           `json:"attempt,omitempty"`
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// Duration: ttft, generation.complete, tool.result/tool.error, completed.
	Duration time.Duration `json:"duration,omitempty"`
	// Error: tool.error, workflow.error, transient_error, rate_limit.
	Error string `json:"error,omitempty"`
	// Memory: the documents of memory.context.loaded, memory.search and
	// memory.write.*.
	Memory []MemoryRef `json:"memory,omitempty"`
	// Gap: the events of a gap (EventGap).
	Gap *Gap `json:"gap,omitempty"`
}

// Gap names the sequence numbers of a conversation's events that were
// emitted but could not be kept, From to To inclusive. Numbers in between
// may belong to no event (numbers are reserved in blocks).
type Gap struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// CallInfo describes a tool call in events.
type CallInfo struct {
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Toolset          string          `json:"toolset,omitempty"`
	Arguments        json.RawMessage `json:"arguments,omitempty"`
	Risk             Risk            `json:"risk,omitempty"`
	RequiresApproval bool            `json:"requires_approval,omitempty"`
	// Result and IsError: tool.result and tool.error.
	Result   string    `json:"result,omitempty"`
	IsError  bool      `json:"is_error,omitempty"`
	Progress *Progress `json:"progress,omitempty"`
}

// EventSender delivers events to a user (a chat, a terminal, a test).
//
// The engine calls Send from one goroutine per subscription and
// conversation, in order; events of different conversations may be sent
// concurrently, and so may one event to different subscribers
// ([Engine.Subscribe]). Send may block (the
// engine buffers behind it, so the run itself is never blocked) and its
// errors are logged and counted, never fatal to the run.
type EventSender interface {
	Send(ctx context.Context, ev Event) error
}

// SenderFunc adapts a function to EventSender.
type SenderFunc func(ctx context.Context, ev Event) error

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, ev Event) error { return f(ctx, ev) }
