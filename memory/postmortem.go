package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/memory/docs"
)

// Postmortem is a postmortem draft to keep (docs/design.md §19).
type Postmortem struct {
	// ConvKey is the incident's conversation: the draft goes to its
	// channel's memory and names it as its source.
	ConvKey string
	// Author is the identity that asked for it ("slack:U1", "cli:alice").
	Author   string
	Title    string
	Content  string
	Tags     []string
	Entities map[string][]string
}

// ErrBlocked is a document the safety scan refused; the error names the
// findings.
var ErrBlocked = errors.New("blocked by the safety scan")

// SavePostmortem keeps p as a postmortem draft (type postmortem, trust
// agent_draft, status draft) in the channel scope of its conversation, at
// postmortems/<slug>.md (-2, -3, … when taken). The draft is scanned like
// every write: a finding refuses it, naming what was found, and nothing is
// stored. An admin promotes it to workspace memory with the promotion card
// (memory_propose_promotion) or `opsgate memory promote ID`.
func (m *Memory) SavePostmortem(ctx context.Context, p Postmortem) (docs.Document, error) {
	scope, err := scopeOf(string(docs.Channel), p.ConvKey, "")
	if err != nil {
		return docs.Document{}, err
	}
	if strings.TrimSpace(p.Content) == "" {
		return docs.Document{}, errors.New("the postmortem is empty")
	}
	if fs := m.Scan(p.Title, p.Content); len(fs) > 0 {
		return docs.Document{}, fmt.Errorf("%w: %s", ErrBlocked, findings(fs))
	}
	d := docs.Document{
		Scope: scope, Title: p.Title, Content: p.Content, Type: docs.Postmortem, Tags: p.Tags, Entities: p.Entities,
		Status: docs.Draft, Trust: docs.AgentDraft, Author: p.Author, Source: docs.Source{ConvKey: p.ConvKey},
	}
	base := "postmortems/" + slug(p.Title)
	for i := 1; ; i++ {
		d.Path = base + ".md"
		if i > 1 {
			d.Path = fmt.Sprintf("%s-%d.md", base, i)
		}
		_, err := m.store.DocumentAt(ctx, scope, d.Path)
		if errors.Is(err, docs.ErrNotFound) {
			break
		}
		if err != nil {
			return docs.Document{}, err
		}
	}
	return m.store.SaveDocument(ctx, d, docs.Save{Note: "postmortem drafted from the timeline of " + p.ConvKey, At: m.opt.Now()})
}
