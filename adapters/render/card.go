package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// maxCardArgs bounds the arguments shown on a card so that a card always
// fits one message; the action hash still binds the whole action.
const maxCardArgs = 1500

// cardMessage renders an approval request: a message of its own (so that
// it notifies), with Approve/Deny buttons while it is pending and the
// outcome instead once it is decided.
func cardMessage(a core.Approval, maxData int) Message {
	if a.Verdict.Proposal {
		return proposalMessage(a, maxData)
	}
	var b strings.Builder
	if a.Risk == core.RiskDestructive {
		b.WriteString("🔴 **Approval needed: destructive action**\n")
	} else {
		b.WriteString("🔐 **Approval needed**\n")
	}
	b.WriteString("Tool: `" + strings.ReplaceAll(a.Tool, "`", "'") + "`")
	if a.Toolset != "" {
		b.WriteString(" on `" + strings.ReplaceAll(a.Toolset, "`", "'") + "`")
	}
	b.WriteString("\nRisk: " + string(a.Risk))
	b.WriteString("\nRequested by " + who(a.Requester))
	if !a.ExpiresAt.IsZero() && a.Status == core.ApprovalPending {
		b.WriteString(" · expires " + a.ExpiresAt.UTC().Format("15:04 MST"))
	}
	b.WriteString("\n```json\n" + prettyArgs(a.Arguments, argsLimit(a)) + "\n```")
	if pv := previewText(a, MaxPreviewLines); pv != "" {
		b.WriteString("\n" + pv)
	}
	if h := a.ActionHash; len(h) >= 12 {
		b.WriteString("\nAction hash " + h[:12])
	}
	m := Message{}
	if a.Status == core.ApprovalPending || a.Status == "" {
		if a.Quorum() > 1 || len(a.Votes) > 0 {
			b.WriteString("\n\n⏳ " + capitalise(Progress(a)))
		}
		m.Buttons = []Button{
			{Label: "✅ Approve", Data: ButtonData(ActionApprove, a.ID, maxData), Style: StylePrimary},
			{Label: "❌ Deny", Data: ButtonData(ActionDeny, a.ID, maxData), Style: StyleDanger},
		}
	} else {
		if p := a.Preview; p != nil && p.Stale != "" {
			// Approved, then found changed before it ran (docs/design.md §18).
			b.WriteString("\n\n⚠️ **" + capitalise(Outcome(a)) + ", not run: it changed since**")
		} else {
			b.WriteString("\n\n" + outcomeIcon(a.Status) + " **" + capitalise(Outcome(a)) + "**")
		}
		if !a.DecidedAt.IsZero() {
			b.WriteString(" at " + a.DecidedAt.UTC().Format(time.TimeOnly+" MST"))
		}
	}
	m.Text = b.String()
	return m
}

// argsLimit is how much of the arguments a card shows: less when a diff
// says what they change, so that the card still fits one message.
func argsLimit(a core.Approval) int {
	if p := a.Preview; p != nil && p.Status == core.PreviewReady && p.Diff != "" {
		return maxCardArgs / 3
	}
	return maxCardArgs
}

func prettyArgs(raw json.RawMessage, limit int) string {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		buf.Reset()
		buf.Write(raw)
	}
	s := strings.ReplaceAll(buf.String(), "```", "`\u200b``")
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "\n… (truncated)"
	}
	if s == "" {
		s = "{}"
	}
	return s
}

func outcomeIcon(s core.ApprovalStatus) string {
	switch s {
	case core.ApprovalApproved:
		return "✅"
	case core.ApprovalDenied:
		return "❌"
	case core.ApprovalExpired:
		return "⌛"
	case core.ApprovalSuperseded:
		return "↪️"
	default:
		return "⏹"
	}
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (s *Sender) postCard(c *conv, a core.Approval) {
	s.mu.Lock()
	_, seen := s.cards[a.ID]
	s.mu.Unlock()
	if seen {
		// A redelivered event, a vote that did not reach the quorum, or
		// the preview arriving: the card is there; show the votes so far
		// and the preview, buttons kept.
		if len(a.Votes) > 0 || a.Preview != nil {
			s.showOutcome(c, a, "")
		}
		return
	}
	m := cardMessage(a, s.limits.MaxButtonData)
	ref, sent, err := s.post(c, m, Urgent, urgentTries)
	if err != nil {
		s.log.Error("render: approval card not delivered", "conv", c.key, "approval", a.ID, "err", err)
		return
	}
	s.mu.Lock()
	s.pruneCardsLocked()
	s.cards[a.ID] = &card{conv: c.key, ref: ref, msg: sent, known: true}
	s.mu.Unlock()
}

// showOutcome edits a card to its decision. ref, when set, is the card's
// message as the clicking user saw it.
func (s *Sender) showOutcome(c *conv, a core.Approval, ref MsgRef) {
	s.mu.Lock()
	cd := s.cards[a.ID]
	if cd == nil && ref != "" {
		cd = &card{conv: c.key, ref: ref}
		s.pruneCardsLocked()
		s.cards[a.ID] = cd
	}
	s.mu.Unlock()
	want := cardMessage(a, s.limits.MaxButtonData)
	if cd == nil {
		// The card was posted by another process or before a restart, and
		// nobody clicked it here: say what happened in a message of its own.
		text := outcomeIcon(a.Status) + " Approval for `" + a.Tool + "`: " + Outcome(a) + "."
		if _, _, err := s.post(c, Message{Text: text}, Urgent, urgentTries); err != nil {
			s.log.Warn("render: approval outcome not delivered", "conv", c.key, "err", err)
		}
		return
	}
	want.Plain = cd.msg.Plain
	if cd.known && cd.msg.Equal(want) {
		s.stats.skipped.Add(1)
		return
	}
	sent, err := s.edit(c, cd.ref, want, Urgent, urgentTries)
	if err != nil {
		s.log.Warn("render: approval card not updated", "conv", c.key, "approval", a.ID, "err", err)
		return
	}
	s.mu.Lock()
	cd.msg, cd.known, cd.resolved = sent, true, time.Now()
	s.mu.Unlock()
}

// pruneCardsLocked forgets cards decided more than an hour ago; pending
// cards stay until their decision (they expire within the approval expiry).
func (s *Sender) pruneCardsLocked() {
	if len(s.cards) < 256 {
		return
	}
	cut := time.Now().Add(-time.Hour)
	for id, cd := range s.cards {
		if !cd.resolved.IsZero() && cd.resolved.Before(cut) {
			delete(s.cards, id)
		}
	}
}

// proposalMessage renders a memory promotion proposal: what would become
// workspace memory, with Promote/Reject buttons for the admins (the same
// approve/deny decision underneath).
func proposalMessage(a core.Approval, maxData int) Message {
	var p struct{ Path, Title, Reason, SHA256 string }
	_ = json.Unmarshal(a.Arguments, &p)
	var b strings.Builder
	b.WriteString("📚 **Memory promotion proposed**\n")
	b.WriteString("Document: `" + strings.ReplaceAll(p.Path, "`", "'") + "`")
	if p.Title != "" {
		b.WriteString(" — " + oneLine(p.Title, 200))
	}
	b.WriteString("\nBecomes workspace memory every conversation sees, marked admin-approved.")
	if p.Reason != "" {
		b.WriteString("\nWhy: " + oneLine(p.Reason, 500))
	}
	b.WriteString("\nProposed in a conversation of " + who(a.Requester))
	if len(p.SHA256) >= 12 {
		b.WriteString(" · version " + p.SHA256[:12])
	}
	m := Message{}
	if a.Status == core.ApprovalPending || a.Status == "" {
		b.WriteString("\nAdmins decide.")
		m.Buttons = []Button{
			{Label: "⬆️ Promote", Data: ButtonData(ActionApprove, a.ID, maxData), Style: StylePrimary},
			{Label: "🗑 Reject", Data: ButtonData(ActionDeny, a.ID, maxData), Style: StyleDanger},
		}
	} else {
		b.WriteString("\n\n" + outcomeIcon(a.Status) + " **" + capitalise(Outcome(a)) + "**")
	}
	m.Text = b.String()
	return m
}
