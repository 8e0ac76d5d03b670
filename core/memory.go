package core

import "context"

// Retriever finds long-term memory (runbooks, past incidents) relevant to a
// query. The memory package implements it; NoMemory is the empty default.
type Retriever interface {
	// Retrieve returns the memory context to inject for query, already cut to
	// the token budget. Trusted is shown as <memory_context>; Untrusted as
	// <untrusted_memory_candidates>. Empty strings mean nothing was found.
	Retrieve(ctx context.Context, convKey, query string, tokenBudget int) (MemoryContext, error)
}

// MemoryContext is what memory_prepare injects before the model call.
type MemoryContext struct {
	Trusted   string
	Untrusted string
	Hits      int
}

// NoMemory is a Retriever that finds nothing.
type NoMemory struct{}

// Retrieve returns an empty context.
func (NoMemory) Retrieve(context.Context, string, string, int) (MemoryContext, error) {
	return MemoryContext{}, nil
}
