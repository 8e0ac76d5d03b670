package memory

import (
	"context"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/timeline"
)

var _ timeline.Saver = PostmortemSaver{}

// PostmortemSaver keeps the postmortem drafts of /postmortem and opsgate
// incident postmortem in long-term memory (timeline.Saver).
type PostmortemSaver struct{ Memory *Memory }

// SavePostmortem saves d as the draft of conversation convKey, by by.
func (s PostmortemSaver) SavePostmortem(ctx context.Context, convKey string, by core.Actor, t timeline.Timeline, d timeline.Draft) (string, string, error) {
	doc, err := s.Memory.SavePostmortem(ctx, Postmortem{ConvKey: convKey, Author: by.ID, Title: d.Title, Content: d.Content, Tags: t.Tags()})
	if err != nil {
		return "", "", err
	}
	return doc.Path, doc.ID, nil
}
