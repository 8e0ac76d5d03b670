package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

var _ core.NoteTaker = (*Memory)(nil)

// noteTitleWords is how many words of a fact make its title.
const noteTitleWords = 8

// SaveNotes keeps the durable facts a compaction found (core.NoteTaker):
// each one a conversation_note draft of the conversation's scope, by the
// agent, at notes/compaction-<run>-<n>.md (n from 1), so that a retried
// compaction of the same run rewrites its notes rather than adding more.
// A fact the safety scanner refuses is skipped with a warning; the others
// are still saved. Store errors are returned, joined.
func (m *Memory) SaveNotes(ctx context.Context, n core.Notes) error {
	if n.ConvKey == "" {
		return errors.New("memory: save notes: no conversation")
	}
	scope := docs.Scope{Kind: docs.Conversation, Key: n.ConvKey}
	var errs []error
	i := 0
	for _, fact := range n.Facts {
		fact = strings.TrimSpace(fact)
		if fact == "" {
			continue
		}
		i++
		d := docs.Document{
			Scope:   scope,
			Path:    fmt.Sprintf("notes/compaction-%s-%d.md", pathSafe(n.RunID), i),
			Title:   noteTitle(fact),
			Content: fact,
			Type:    docs.ConversationNote,
			Status:  docs.Draft,
			Trust:   docs.AgentDraft,
			Source:  docs.Source{ConvKey: n.ConvKey, RunID: n.RunID},
			Author:  "agent",
		}
		if fs := m.Scan(d.Title, d.Content); len(fs) > 0 {
			m.opt.Logger.Warn("memory: compaction note blocked", "conv", n.ConvKey, "run", n.RunID,
				"path", d.Path, "findings", findings(fs))
			continue
		}
		if _, err := m.store.SaveDocument(ctx, d, docs.Save{Note: "compaction note", At: m.opt.Now()}); err != nil {
			errs = append(errs, fmt.Errorf("memory: save note %s: %w", d.Path, err))
		}
	}
	return errors.Join(errs...)
}

// noteTitle is the first words of a fact, "…" marking the cut.
func noteTitle(fact string) string {
	ws := strings.Fields(fact)
	if len(ws) <= noteTitleWords {
		return strings.Join(ws, " ")
	}
	return strings.Join(ws[:noteTitleWords], " ") + " …"
}

// pathSafe keeps letters, digits, '-' and '_' of an id for a path.
func pathSafe(id string) string {
	s := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || !notWord(r) {
			return r
		}
		return '-'
	}, id)
	if s == "" {
		return "run"
	}
	return s
}
