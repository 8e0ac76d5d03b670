package memory_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

// searches counts the store's searches.
type searches struct {
	docs.Store
	n atomic.Int64
}

func (s *searches) SearchDocuments(ctx context.Context, q docs.Query) ([]docs.Match, error) {
	s.n.Add(1)
	return s.Store.SearchDocuments(ctx, q)
}

// memory_prepare asks Retrieve at every turn; while the store holds no
// document the conversation may see (an empty memory, or only other
// conversations' notes, or archived ones) it searches nothing (issue 25).
func TestRetrieveSearchesNothingWhileNoDocumentIsVisible(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		counted := &searches{Store: s}
		m := mem(t, counted)
		ask := func() core.MemoryContext {
			t.Helper()
			mc, err := m.Retrieve(t.Context(), core.MemoryQuery{ConvKey: "tg:1", Person: "alice", Text: "how do I roll back payments-api?"})
			if err != nil {
				t.Fatal(err)
			}
			return mc
		}
		if mc := ask(); mc.Text != "" || counted.n.Load() != 0 {
			t.Fatalf("empty store: %d searches, context %q; want none", counted.n.Load(), mc.Text)
		}
		saveDoc(t, s, docs.Document{Scope: docs.Scope{Kind: docs.Conversation, Key: "tg:2"}, Path: "notes/rollback.md",
			Title: "Roll back payments-api", Content: "Roll back payments-api with helm rollback payments-api."})
		gone := saveDoc(t, s, docs.Document{Path: "payments/rollback.md", Title: "Roll back payments-api",
			Content: "Roll back payments-api with helm rollback payments-api."})
		gone.Status = docs.Archived
		saveDoc(t, s, gone)
		if mc := ask(); mc.Text != "" || counted.n.Load() != 0 {
			t.Fatalf("only another conversation's and archived documents: %d searches, context %q; want none", counted.n.Load(), mc.Text)
		}
		saveDoc(t, s, docs.Document{Path: "payments/rollback-runbook.md", Title: "Roll back payments-api",
			Content: "Roll back payments-api with helm rollback payments-api."})
		if mc := ask(); mc.Text == "" || counted.n.Load() != 1 {
			t.Fatalf("a visible document: %d searches, context %q; want one search finding it", counted.n.Load(), mc.Text)
		}
	})
}
