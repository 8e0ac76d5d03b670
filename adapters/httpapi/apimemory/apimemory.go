// Package apimemory answers the HTTP API's memory search with long-term
// memory. It lives apart from httpapi so that the API itself links no store
// driver (memory does, through memory.Open).
package apimemory

import (
	"context"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/memory"
)

// Searcher is httpapi.MemorySearcher over m.Search.
func Searcher(m *memory.Memory) httpapi.MemorySearcher { return searcher{m} }

type searcher struct{ m *memory.Memory }

func (s searcher) SearchMemory(ctx context.Context, q httpapi.MemoryQuery) ([]httpapi.MemoryResult, error) {
	ss, err := s.m.Search(ctx, memory.SearchRequest{Text: q.Text, Scopes: q.Scopes, Limit: q.Limit})
	out := make([]httpapi.MemoryResult, len(ss))
	for i, sc := range ss {
		out[i] = httpapi.MemoryResult{Doc: sc.Doc, Score: sc.Score}
	}
	return out, err
}
