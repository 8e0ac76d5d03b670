package slack

import (
	"strings"
	"sync"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/slack-go/slack"
)

// Block Kit limits (Slack documents the first three; the cumulative one is
// what chat.postMessage answers msg_blocks_too_long for, at about 12,000
// characters of block text).
const (
	maxBlocks       = 50
	maxButtonLabel  = 75
	blockTextBudget = 11000
	fallbackLen     = 200
	actionIDPrefix  = "opsgate:"
)

// confirms remembers which pending approvals are destructive, so that
// their cards' Approve buttons get Slack's confirm dialog. render's
// Message has no such notion; the adapter's Sender sees the approval event
// before render posts the card.
type confirms struct {
	mu sync.Mutex
	m  map[string]confirmInfo
}

type confirmInfo struct {
	tool, toolset string
	at            time.Time
}

func (c *confirms) note(a core.Approval) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]confirmInfo{}
	}
	if a.Status != core.ApprovalPending && a.Status != "" {
		delete(c.m, a.ID)
		return
	}
	if a.Risk != core.RiskDestructive {
		return
	}
	now := time.Now()
	for id, ci := range c.m {
		if now.Sub(ci.at) > 24*time.Hour {
			delete(c.m, id)
		}
	}
	c.m[a.ID] = confirmInfo{tool: a.Tool, toolset: a.Toolset, at: now}
}

func (c *confirms) dialog(approvalID string) *slack.ConfirmationBlockObject {
	c.mu.Lock()
	ci, ok := c.m[approvalID]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	what := "`" + escape(strings.ReplaceAll(ci.tool, "`", "'")) + "`"
	if ci.toolset != "" {
		what += " on `" + escape(strings.ReplaceAll(ci.toolset, "`", "'")) + "`"
	}
	return slack.NewConfirmationBlockObject(
		slack.NewTextBlockObject(slack.PlainTextType, "Destructive action", false, false),
		slack.NewTextBlockObject(slack.MarkdownType, "Run "+what+"? It is marked destructive and may not be undoable.", false, false),
		slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false),
		slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false),
	).WithStyle(slack.StyleDanger)
}

// toBlocks renders a message as Block Kit: section blocks (mrkdwn, or
// plain_text when the message is plain or its mrkdwn would be too long for
// Slack) and an actions block for its buttons, whose Approve buttons get
// the confirm dialog c has for them. fallback is the text field, which
// Slack shows in notifications.
func toBlocks(m render.Message, c *confirms) (blocks []slack.Block, fallback string) {
	var texts []*slack.TextBlockObject
	if !m.Plain {
		secs := mrkdwnSections(m.Text)
		total := 0
		for _, s := range secs {
			total += render.Len(s)
		}
		if total <= blockTextBudget && len(secs) < maxBlocks {
			for _, s := range secs {
				texts = append(texts, slack.NewTextBlockObject(slack.MarkdownType, s, false, false))
			}
		}
	}
	if texts == nil {
		for _, s := range plainSections(m.Text) {
			texts = append(texts, slack.NewTextBlockObject(slack.PlainTextType, s, true, false))
		}
	}
	if len(texts) == 0 {
		texts = append(texts, slack.NewTextBlockObject(slack.PlainTextType, "…", true, false))
	}
	if len(texts) > maxBlocks-1 {
		// Unreachable with MaxText: plain pieces are at least a few hundred
		// characters. Keep Slack from refusing the whole message.
		texts = texts[:maxBlocks-1]
	}
	for _, t := range texts {
		blocks = append(blocks, slack.NewSectionBlock(t, nil, nil))
	}
	if len(m.Buttons) > 0 {
		blocks = append(blocks, actions(m.Buttons, c))
	}
	return blocks, summary(m)
}

func actions(bs []render.Button, c *confirms) *slack.ActionBlock {
	var els []slack.BlockElement
	for _, b := range bs {
		el := slack.NewButtonBlockElement(actionIDPrefix+b.Data, b.Data,
			slack.NewTextBlockObject(slack.PlainTextType, core.Truncate(b.Label, maxButtonLabel, core.Runes), true, false))
		switch b.Style {
		case render.StylePrimary:
			el = el.WithStyle(slack.StylePrimary)
		case render.StyleDanger:
			el = el.WithStyle(slack.StyleDanger)
		}
		if act, id, ok := render.ParseButtonData(b.Data); ok && act == render.ActionApprove {
			if d := c.dialog(id); d != nil {
				el = el.WithConfirm(d)
			}
		}
		els = append(els, el)
	}
	return slack.NewActionBlock("opsgate_actions", els...)
}

// summary is the notification text: the start of what the message says.
func summary(m render.Message) string {
	text := m.Text
	if !m.Plain {
		text = render.PlainText(text)
	}
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		text = "…"
	}
	return escape(core.Truncate(text, fallbackLen, core.Runes))
}
