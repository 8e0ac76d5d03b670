package memory

import (
	"log/slog"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// Memory is long-term memory over a docs.Store (docs/design.md §14): retrieval for
// memory_prepare (core.Retriever), the memory tools (core.VirtualTool), the
// chat commands (core.Commands), import and export. It is safe for
// concurrent use.
type Memory struct {
	store docs.Store
	opt   Options
	stats *statsCache // document frequencies for Coverage
}

// Options configures a Memory. Zero fields take their defaults.
type Options struct {
	// Secrets finds secrets in text that is about to be written: the
	// policy's detectors (redact.Redactor.String fits). Nil means the
	// built-in detectors of package policy/redact.
	Secrets func(string) string
	// Tokens counts tokens as the bench does (cl100k_base). Nil means
	// internal/tokens.Count.
	Tokens func(string) int
	// Logger: default slog.Default().
	Logger *slog.Logger
	// Now: default time.Now.
	Now func() time.Time
	// MaxDocBytes is the largest document (memory.max_doc_bytes): import
	// skips a larger file from its size alone, and the scanner refuses
	// larger content. 0 means MaxContentBytes.
	MaxDocBytes int
	// MinScore is the relevance floor of Retrieve (memory.min_score): a
	// document covering less of the question is not injected. 0 means
	// DefaultMinScore; a negative value turns the floor off.
	MinScore float64
}

// New returns a Memory over store.
func New(store docs.Store, opt Options) *Memory {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.MaxDocBytes <= 0 {
		opt.MaxDocBytes = MaxContentBytes
	}
	if opt.MinScore == 0 {
		opt.MinScore = DefaultMinScore
	}
	return &Memory{store: store, opt: opt, stats: &statsCache{}}
}

// Store returns the documents' store.
func (m *Memory) Store() docs.Store { return m.store }
