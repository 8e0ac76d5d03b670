package render_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// The documents memory_prepare gave the model show as one compact line
// above the answer; drafts are marked.
func TestMemoryLineNamesTheDocuments(t *testing.T) {
	s, p := newSender(t, fastLimits)
	conv := "mem:bot:1"
	send(t, s,
		core.Event{Type: core.EventReady, ConvKey: conv, RunID: "r1"},
		core.Event{Type: core.EventMemoryContextLoaded, ConvKey: conv, RunID: "r1", Memory: []core.MemoryRef{
			{Path: "payments/rollback.md", Type: "runbook", Trusted: true},
			{Path: "notes/dns.md", Type: "conversation_note"},
		}},
		core.Event{Type: core.EventToken, ConvKey: conv, RunID: "r1", Text: "Roll back."},
		core.Event{Type: core.EventCompleted, ConvKey: conv, RunID: "r1", Status: core.RunDone},
	)
	flush(t, s)
	msgs := p.Messages(conv)
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0].Text, "📚 runbook: payments/rollback.md · conversation note: notes/dns.md (draft)") ||
		!strings.Contains(msgs[0].Text, "Roll back.") {
		t.Fatalf("messages = %+v", msgs)
	}
}

// A promotion proposal is a card of its own with Promote/Reject; its
// decision edits that card even after the proposing run ended.
func TestPromotionProposalCard(t *testing.T) {
	s, p := newSender(t, fastLimits)
	conv := "mem:bot:1"
	args, _ := json.Marshal(map[string]string{"path": "notes/pool.md", "title": "Payments pool size", "reason": "held in INC-2041", "sha256": strings.Repeat("ab", 32)})
	a := core.Approval{ID: "p1", ConvKey: conv, RunID: "r1", Tool: "memory_propose_promotion", Toolset: "memory", Arguments: args,
		Status: core.ApprovalPending, Requester: core.Actor{ID: "u1", Name: "alice"}, Verdict: core.Verdict{Action: core.ActionAsk, Proposal: true, Quorum: 1}}
	send(t, s,
		core.Event{Type: core.EventReady, ConvKey: conv, RunID: "r1"},
		core.Event{Type: core.EventMemoryPromotionProposed, ConvKey: conv, RunID: "r1", Approval: &a},
		core.Event{Type: core.EventCompleted, ConvKey: conv, RunID: "r1", Status: core.RunDone, Text: "Proposed."},
	)
	flush(t, s)
	var card string
	for _, m := range p.Messages(conv) {
		if strings.Contains(m.Text, "Memory promotion proposed") {
			card = m.Text
			if len(m.Buttons) != 2 || !strings.Contains(m.Buttons[0].Label, "Promote") || !strings.Contains(m.Buttons[1].Label, "Reject") {
				t.Errorf("buttons = %+v", m.Buttons)
			}
		}
	}
	if !strings.Contains(card, "Document: notes/pool.md — Payments pool size") || !strings.Contains(card, "Why: held in INC-2041") {
		t.Fatalf("card = %q", card)
	}
	decided := a
	decided.Status, decided.DecidedBy, decided.DecidedAt = core.ApprovalApproved, core.Actor{ID: "u2", Name: "bob"}, time.Now()
	send(t, s, core.Event{Type: core.EventToolApproved, ConvKey: conv, RunID: "r1", Approval: &decided})
	flush(t, s)
	for _, m := range p.Messages(conv) {
		if strings.Contains(m.Text, "Memory promotion proposed") && (!strings.Contains(m.Text, "Promoted by bob") || len(m.Buttons) != 0) {
			t.Errorf("decided card = %q, buttons %d", m.Text, len(m.Buttons))
		}
	}
	if n := len(p.Messages(conv)); n != 2 {
		t.Errorf("%d messages, want the answer and the card (a decision adds none)", n)
	}
}
