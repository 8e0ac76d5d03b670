package memory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

// Compaction's facts become conversation-scope drafts of the agent, seen
// by that conversation only, as untrusted candidates; a fact the scanner
// refuses is skipped; a retried compaction rewrites its notes.
func TestSaveNotes(t *testing.T) {
	eachStore(t, func(t *testing.T, s docs.Store) {
		m := newMemory(t, s)
		conv := "slack:T1:C1:1.1"
		n := core.Notes{ConvKey: conv, RunID: "r1", Facts: []string{
			"payments-api 502s came from the readiness probe hitting /health before the PSP pool was warm",
			"  ",
			"the AWS key is AKIAIOSFODNN7EXAMPLE",
			"Rollback of payments-api to v1.42.0 fixed it",
		}}
		if err := m.SaveNotes(t.Context(), n); err != nil {
			t.Fatal(err)
		}
		ds, err := s.Documents(t.Context(), docs.Filter{Scopes: []docs.Scope{{Kind: docs.Conversation, Key: conv}}})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, d := range ds {
			paths = append(paths, d.Path)
			if d.Type != docs.ConversationNote || d.Trust != docs.AgentDraft || d.Status != docs.Draft ||
				d.Source.RunID != "r1" || d.Source.ConvKey != conv {
				t.Errorf("%s: %+v", d.Path, d)
			}
			if strings.Contains(d.Content, "AKIA") {
				t.Errorf("a secret was saved: %s", d.Content)
			}
		}
		if want := []string{"notes/compaction-r1-1.md", "notes/compaction-r1-3.md"}; !slices.Equal(paths, want) {
			t.Errorf("notes %v, want %v", paths, want)
		}
		if d, _ := s.DocumentAt(t.Context(), docs.Scope{Kind: docs.Conversation, Key: conv}, "notes/compaction-r1-1.md"); d.Title != "payments-api 502s came from the readiness probe hitting …" {
			t.Errorf("title %q", d.Title)
		}
		// Again: the same notes, not more.
		if err := m.SaveNotes(t.Context(), n); err != nil {
			t.Fatal(err)
		}
		if again, _ := s.Documents(t.Context(), docs.Filter{Scopes: []docs.Scope{{Kind: docs.Conversation, Key: conv}}}); len(again) != len(ds) {
			t.Errorf("a retried compaction left %d notes, want %d", len(again), len(ds))
		}
		mc, err := m.Retrieve(t.Context(), core.MemoryQuery{ConvKey: conv, Text: "payments-api readiness probe rollback", TokenBudget: 2200, MaxDocs: 6})
		if err != nil {
			t.Fatal(err)
		}
		_, untrusted := blocks(t, mc.Text)
		if len(mc.Refs) != 2 || mc.Refs[0].Trusted || !strings.Contains(untrusted, "notes/compaction-r1-1.md") {
			t.Errorf("refs %+v, text:\n%s", mc.Refs, mc.Text)
		}
		other, err := m.Retrieve(t.Context(), core.MemoryQuery{ConvKey: "slack:T1:C1:2.2", Text: "payments-api readiness probe rollback"})
		if err != nil || len(other.Refs) != 0 {
			t.Errorf("another conversation got %+v, %v", other.Refs, err)
		}
	})
}

func TestSaveNotesErrors(t *testing.T) {
	if err := newMemory(t, openSQLite(t)).SaveNotes(t.Context(), core.Notes{Facts: []string{"x"}}); err == nil {
		t.Error("notes without a conversation saved")
	}
	boom := errors.New("boom")
	s := savingFails{Store: openSQLite(t), err: boom}
	if err := newMemory(t, s).SaveNotes(t.Context(), core.Notes{ConvKey: "c", RunID: "r", Facts: []string{"a fact"}}); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

type savingFails struct {
	docs.Store
	err error
}

func (s savingFails) SaveDocument(ctx context.Context, d docs.Document, opt docs.Save) (docs.Document, error) {
	return docs.Document{}, s.err
}
