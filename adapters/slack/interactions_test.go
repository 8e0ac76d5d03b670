package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

func call(id, name, args string) llmfake.ToolCall {
	return llmfake.ToolCall{ID: id, Name: name, Arguments: args}
}

// Approval by an allowed approver executes; a stranger's click gets a
// private refusal and is audited, and runs nothing.
func TestApprovalByApproverRunsStrangerRefused(t *testing.T) {
	s := newStack(t)
	root, card := s.requestScale()
	if !strings.Contains(card.Plain(), "scale_deployment") || !strings.Contains(card.Plain(), "@alice") {
		t.Errorf("card should name the tool and the requester: %q", card.Plain())
	}
	approve, _ := card.Button("approve")
	deny, _ := card.Button("deny")
	if approve.Style != "primary" || deny.Style != "danger" {
		t.Errorf("button styles approve=%q deny=%q, want primary and danger", approve.Style, deny.Style)
	}
	if approve.Confirm != nil {
		t.Errorf("a write (not destructive) request should not need a confirm dialog")
	}

	s.fake.SendClick(t, s.fake.Click(mallory, "mallory", card, approve))
	s.fake.Eventually(t, "the stranger's refusal", func() bool { return len(s.fake.Ephemerals(mallory)) == 1 })
	if e := s.fake.Ephemerals(mallory)[0]; !strings.Contains(e.Text, "not allowed") || e.ThreadTS != root {
		t.Errorf("refusal = %+v, want a private 'not allowed' in the thread", e)
	}
	audit, err := s.store.Audit(context.Background(), core.AuditFilter{ConvKey: key(chOps, root)})
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, e := range audit {
		if e.Kind == core.AuditRefused && e.Actor.ID == mallory && e.Tool == "scale_deployment" {
			refused = true
		}
	}
	if !refused {
		t.Errorf("the stranger's click is not in the audit log: %+v", audit)
	}
	if calls := s.k8s.Calls(); len(calls) != 0 {
		t.Fatalf("a tool ran after a stranger's click: %+v", calls)
	}
	if c, _ := s.fake.Message(chOps, card.TS); len(c.Buttons()) != 2 {
		t.Errorf("the card lost its buttons after a refused click")
	}

	s.fake.SendClick(t, s.fake.Click(bob, "bob", card, approve))
	s.waitFinal(chOps, root, "Web runs 3 replicas now.")
	if calls := s.k8s.Calls(); len(calls) != 1 || calls[0].Tool != "scale_deployment" {
		t.Errorf("tool calls = %+v, want scale_deployment once", calls)
	}
	s.waitCardOutcome(card, "Approved by @bob")

	// A late click on the decided card is told so.
	s.fake.SendClick(t, s.fake.Click(alice, "alice", card, deny))
	s.fake.Eventually(t, "the already-decided notice", func() bool { return len(s.fake.Ephemerals(alice)) == 1 })
	if e := s.fake.Ephemerals(alice)[0]; !strings.Contains(e.Text, "already decided") {
		t.Errorf("late click answered %q", e.Text)
	}
}

// A destructive request's Approve button carries Slack's confirm dialog;
// the requester may deny it, and nothing runs.
func TestDestructiveApproveHasConfirmDialog(t *testing.T) {
	s := newStack(t)
	root, ev := s.fake.Mention(chOps, alice, "delete the staging namespace", "")
	s.loadWriteTools(key(chOps, root))
	s.llm.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{call("c1", "delete_namespace", `{"namespace":"staging"}`)}},
		llmfake.Reply{Text: "Left staging alone."},
	)
	s.fake.SendEvent(t, ev)
	card := s.waitCard(chOps, root)
	approve, _ := card.Button("approve")
	c := approve.Confirm
	if c == nil || c.Style != "danger" || c.Text == nil || !strings.Contains(c.Text.Text, "delete_namespace") {
		t.Fatalf("approve button of a destructive request: confirm = %+v, want a danger dialog naming the tool", c)
	}
	if deny, _ := card.Button("deny"); deny.Confirm != nil {
		t.Errorf("deny needs no confirmation")
	}
	deny, _ := card.Button("deny")
	s.fake.SendClick(t, s.fake.Click(alice, "alice", card, deny))
	s.waitFinal(chOps, root, "Left staging alone.")
	s.waitCardOutcome(card, "Denied by @alice")
	if calls := s.k8s.Calls(); len(calls) != 0 {
		t.Errorf("denied tool ran: %+v", calls)
	}
}

// The Stop button stops the run it belongs to.
func TestStopButton(t *testing.T) {
	s := newStack(t)
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Working", Hold: hold})
	root, ev := s.fake.Mention(chOps, alice, "long job", "")
	s.fake.SendEvent(t, ev)
	draft := s.waitReplies(chOps, root, "a draft with a Stop button", func(ms []slacktest.Message) bool {
		return len(ms) == 1 && len(ms[0].Buttons()) == 1
	})[0]
	stop, _ := draft.Button("stop")
	s.fake.SendClick(t, s.fake.Click(bob, "bob", draft, stop))
	s.waitReplies(chOps, root, "the stopped draft", func(ms []slacktest.Message) bool {
		return len(ms) == 1 && strings.Contains(ms[0].Plain(), "Stopped") && len(ms[0].Buttons()) == 0
	})
}

// waitCardOutcome waits until a card shows its outcome instead of buttons.
func (s *stack) waitCardOutcome(card slacktest.Message, outcome string) {
	s.t.Helper()
	s.fake.Eventually(s.t, "the card to show "+outcome, func() bool {
		m, _ := s.fake.Message(card.Channel, card.TS)
		return strings.Contains(m.Plain(), outcome) && len(m.Buttons()) == 0
	})
}
