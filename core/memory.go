package core

import (
	"context"
)

// Retriever finds the long-term memory (runbooks, lessons, conventions)
// relevant to a user turn: memory_prepare asks it once per turn (docs/design.md
// §14). Package memory implements it; NoMemory is the empty default.
type Retriever interface {
	// Retrieve returns what to inject for q, already cut to q.TokenBudget
	// and q.MaxDocs. An error means "no memory this turn": the engine logs
	// a warning and the run goes on.
	Retrieve(ctx context.Context, q MemoryQuery) (MemoryContext, error)
}

// MemoryQuery is one turn's retrieval request.
type MemoryQuery struct {
	ConvKey   string
	RunID     string
	Requester Actor
	// Person is the requester folded by the policy: the key of their user
	// scope.
	Person string
	// Text is the user's latest message.
	Text        string
	TokenBudget int // memory.token_budget, wrappers included
	MaxDocs     int // memory.max_docs, trusted and untrusted together
}

// MemoryContext is what memory_prepare injects before each model call of
// the turn: Text is the whole extra system message (the
// <memory_context> and <untrusted_memory_candidates> blocks), Refs the
// documents in it. Empty Text means nothing is injected.
type MemoryContext struct {
	Text string
	Refs []MemoryRef
}

// MemoryRef names a document given to the model, for memory.context.loaded
// and the chat's one-line note.
type MemoryRef struct {
	ID      string  `json:"id"`
	Path    string  `json:"path"`
	Type    string  `json:"type"`
	Trust   string  `json:"trust"`
	Trusted bool    `json:"trusted"`
	Score   float64 `json:"score"`
}

// NoteTaker is an optional ability of a Retriever: keeping the durable
// facts a compaction found, as conversation-scope drafts.
type NoteTaker interface {
	SaveNotes(ctx context.Context, n Notes) error
}

// Notes are facts worth keeping from a conversation.
type Notes struct {
	ConvKey string
	RunID   string
	Facts   []string
}

// NoMemory is a Retriever that finds nothing.
type NoMemory struct{}

// Retrieve returns an empty context.
func (NoMemory) Retrieve(context.Context, MemoryQuery) (MemoryContext, error) {
	return MemoryContext{}, nil
}

// Commands answers chat commands that are not runs (/remember, /memory,
// /forget): the engine asks it about every message before starting a run.
type Commands interface {
	// Command returns the reply (Markdown) and true when text is one of its
	// commands; false leaves the message to the model.
	Command(ctx context.Context, c CommandCall) (reply string, ok bool)
}

// CommandCall is a message that may be a command.
type CommandCall struct {
	ConvKey string
	User    Actor
	Person  string // User folded by the policy
	// Admin reports whether the person may promote memory (policy role
	// admin; without a policy, the platform's approvers).
	Admin bool
	Text  string
	// Defer, when set, lets a command that takes long (a model call)
	// answer later: it passes the work and returns ("", true); the
	// engine runs the work in the background, with a context of its own,
	// and posts what it returns as the answer. Adapters wait for Handle,
	// some with short deadlines, and must not wait for a model.
	Defer func(work func(ctx context.Context) string)
}
