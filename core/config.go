package core

import (
	"fmt"
	"log/slog"
	"time"
)

// QueueMode says what happens to a message that arrives while a run is active.
type QueueMode string

// Queue modes (docs/design.md §2).
const (
	// QueueSteer injects the message before the next model call and skips the
	// unstarted tool calls of the current batch.
	QueueSteer QueueMode = "steer"
	// QueueFollowup runs the message after the current run.
	QueueFollowup QueueMode = "followup"
	// QueueInterrupt stops the current run, then runs the message.
	QueueInterrupt QueueMode = "interrupt"
)

// Config tunes the engine. The zero value of every field means its default.
type Config struct {
	// SystemPrompt is the base system prompt; memory context never replaces it.
	SystemPrompt string
	// MaxIterations bounds model calls per run (default 25).
	MaxIterations int
	// ContextWindowMessages is how many newest messages windowing keeps (default 40).
	ContextWindowMessages int
	// QueueMode: default steer.
	QueueMode QueueMode
	// ApprovalExpiry: default 30 minutes. Expiry counts as a denial.
	ApprovalExpiry time.Duration
	// DefaultToolsets are loaded (read-only tools) into new conversations.
	DefaultToolsets []string
	// MemoryEnabled turns memory_prepare on; MemoryTokenBudget defaults to 2,200.
	// MemoryMaxDocs defaults to 6.
	MemoryEnabled     bool
	MemoryTokenBudget int
	MemoryMaxDocs     int
	// ContextTokens is the model's context size (llm.context_tokens,
	// default 100,000): past 70 % of it the history is compacted.
	ContextTokens int
	// Titles: after three exchanges a conversation gets a model-written
	// title (one more model call). cmd/opsgate turns it on; engines in
	// tests leave it off so that their model calls stay as scripted.
	Titles bool
	// CountTokens counts the tokens of a text for compaction; default one
	// per 4 bytes (cmd/opsgate passes the cl100k_base counter).
	CountTokens func(string) int
	// Retry is the model retry policy.
	Retry RetryPolicy
	// Policy decides which calls need approval or are denied, and who may
	// decide (docs/design.md §11). Nil is DefaultPolicy{}: the requester decides.
	// It cannot make a tool skip approval: the engine treats a read verdict
	// for a call whose risk needs approval as an ask.
	Policy Policy
	// Limiter, when set, bounds how many messages each person may send per
	// minute (limits.runs_per_person_per_minute): Handle asks it for every
	// message but /stop, with the person the policy folds the sender to.
	Limiter Limiter
	// RedactToolResult, when set, rewrites every tool result before it is
	// added to the transcript the model reads (redact.model_input): the
	// secrets a tool printed never reach the model provider.
	RedactToolResult func(string) string
	// RedactInput, when set, rewrites a person's message before anything
	// is stored (docs/design.md §17): the inbound row, the transcript, the
	// commands and the model all see the redacted text, so a secret typed
	// in chat is kept nowhere.
	RedactInput func(string) string
	// ExpirySweep is how often expired approvals are looked for (default 5 s).
	ExpirySweep time.Duration
	// EventRetention is how long events are kept for streams that
	// reconnect ([Engine.Events]); older ones are pruned (default 7 days).
	EventRetention time.Duration
	// EventBuffer is the most events kept in memory while the store cannot
	// take them (default 10,000); past it the oldest are dropped and a
	// replaying stream is told so (docs/design.md §16, `event: gap`).
	EventBuffer int
	// ForgetIdleAfter: a conversation with nothing running, queued or
	// waiting to be delivered for this long is dropped from memory
	// (default 10 min); it is read from the store when it is used again.
	ForgetIdleAfter time.Duration
}

// RetryPolicy is how the engine retries model calls. Backoff doubles from
// Base per attempt up to the cap; a server's Retry-After wins when larger.
type RetryPolicy struct {
	MaxRetries   int           // default 3
	Base         time.Duration // default 1 s
	RateLimitMax time.Duration // default 60 s
	TransientMax time.Duration // default 30 s
}

func (c Config) withDefaults() (Config, error) {
	if c.MaxIterations == 0 {
		c.MaxIterations = 25
	}
	if c.ContextWindowMessages == 0 {
		c.ContextWindowMessages = 40
	}
	if c.QueueMode == "" {
		c.QueueMode = QueueSteer
	}
	if c.ApprovalExpiry == 0 {
		c.ApprovalExpiry = 30 * time.Minute
	}
	if c.Policy == nil {
		c.Policy = DefaultPolicy{}
	}
	if c.MemoryTokenBudget == 0 {
		c.MemoryTokenBudget = 2200
	}
	if c.ContextTokens == 0 {
		c.ContextTokens = 100000
	}
	if c.CountTokens == nil {
		c.CountTokens = func(s string) int { return (len(s) + 3) / 4 }
	}
	if c.MemoryMaxDocs == 0 {
		c.MemoryMaxDocs = 6
	}
	if c.Retry.MaxRetries == 0 {
		c.Retry.MaxRetries = 3
	}
	if c.Retry.Base == 0 {
		c.Retry.Base = time.Second
	}
	if c.Retry.RateLimitMax == 0 {
		c.Retry.RateLimitMax = 60 * time.Second
	}
	if c.Retry.TransientMax == 0 {
		c.Retry.TransientMax = 30 * time.Second
	}
	if c.ExpirySweep == 0 {
		c.ExpirySweep = 5 * time.Second
	}
	if c.EventBuffer <= 0 {
		c.EventBuffer = 10000
	}
	if c.EventRetention == 0 {
		c.EventRetention = 7 * 24 * time.Hour
	}
	if c.ForgetIdleAfter == 0 {
		c.ForgetIdleAfter = 10 * time.Minute
	}
	switch c.QueueMode {
	case QueueSteer, QueueFollowup, QueueInterrupt:
	default:
		return c, fmt.Errorf("core: queue mode %q: want steer, followup or interrupt", c.QueueMode)
	}
	if c.MaxIterations < 1 || c.ContextWindowMessages < 2 || c.ApprovalExpiry < 0 || c.Retry.MaxRetries < 0 {
		return c, fmt.Errorf("core: max iterations must be >= 1, context window >= 2, approval expiry >= 0, retries >= 0")
	}
	return c, nil
}

// Deps are the engine's collaborators. Model, Tools and Store are required.
type Deps struct {
	Model Model
	Tools ToolHost
	Store Store
	// Sender, when set, is subscribed to every conversation's events;
	// more subscribers come and go with [Engine.Subscribe].
	Sender    EventSender
	Retriever Retriever    // default NoMemory
	Logger    *slog.Logger // default slog.Default()
	Now       func() time.Time
	// Virtual are in-process tools (the memory tools) besides load_toolset.
	Virtual []VirtualTool
	// Previewer, when set, works out the previews of approval cards and
	// checks them again before an approved call runs (docs/design.md §18).
	Previewer Previewer
	// Commands answers chat commands that are not runs (/remember …).
	Commands Commands
	// Coordinator shares conversations with other replicas; nil when this
	// process is the only one.
	Coordinator Coordinator
	// Display, when set, prepares every event for people (cmd/opsgate
	// redacts secrets with it) before it is kept or handed to any
	// subscriber, so that all of them, and a stream replayed from the
	// store, show the same thing. It appends to dst what people are shown
	// for ev and returns dst: usually ev, changed; nothing shown for a
	// fragment it holds back, or first what it held back (the redactor's
	// held tail of a streamed answer, as a last token before
	// generation.complete: docs/design.md §16, streams are whole). A token or
	// thinking event with empty text is then dropped. It is called once
	// per event, in each conversation's Seq order, on the goroutine
	// emitting it; it must be fast and must not call the engine. The
	// engine numbers what it returns (Seq). The engine's own copies (the
	// transcript, approvals, what runs) are never changed.
	Display func(dst []Event, ev Event) []Event
	// DisplayApproval, when set, makes an approval the engine hands out
	// (Decide, DenyAsSystem, Status) safe to show people, as Display makes
	// events: with both, nothing the engine hands out needs redacting
	// again downstream (docs/design.md §11). It returns a copy; the
	// engine's own is never changed.
	DisplayApproval func(Approval) Approval
}

// Limiter admits or refuses a person's next message. Allow records an
// admitted one; Limit is the number it allows per minute (for the text).
type Limiter interface {
	Allow(person string, now time.Time) bool
	Limit() int
}
