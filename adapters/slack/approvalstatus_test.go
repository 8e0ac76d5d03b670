package slack_test

import (
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// requestScale has alice ask in #ops to scale web to 3; the model answers
// "Scaling web." with the call, and after it "Web runs 3 replicas now.".
// It returns the thread and the approval card.
func (s *stack) requestScale() (root string, card slacktest.Message) {
	s.t.Helper()
	root, ev := s.fake.Mention(chOps, alice, "scale web to 3", "")
	s.loadWriteTools(key(chOps, root))
	s.llm.Push(
		llmfake.Reply{Text: "Scaling web.", ToolCalls: []llmfake.ToolCall{call("c1", "scale_deployment", `{"name":"web","namespace":"prod","replicas":3}`)}},
		llmfake.Reply{Text: "Web runs 3 replicas now."},
	)
	s.fake.SendEvent(s.t, ev)
	return root, s.waitCard(chOps, root)
}

// The run's status message (the draft that paused for approval) stops
// saying it waits once the approved tool ran: the chat.update calls for it
// end with text that points to the answer below, with no "awaiting
// approval" left.
func TestStatusMessageAfterApprovalNoLongerWaits(t *testing.T) {
	s := newStack(t)
	root, card := s.requestScale()
	var status slacktest.Message
	s.waitReplies(chOps, root, "the status message waiting for approval", func(ms []slacktest.Message) bool {
		for _, m := range ms {
			if m.TS != card.TS && strings.Contains(m.Plain(), "Waiting for approval") {
				status = m
				return true
			}
		}
		return false
	})
	if !strings.Contains(status.Plain(), "awaiting approval") || !strings.Contains(status.Plain(), "Scaling web.") {
		t.Fatalf("status message while paused = %q, want the text and the call awaiting approval", status.Plain())
	}

	approve, _ := card.Button("approve")
	s.fake.SendClick(t, s.fake.Click(alice, "alice", card, approve))
	s.waitFinal(chOps, root, "Web runs 3 replicas now.")
	if calls := s.k8s.Calls(); len(calls) != 1 || calls[0].Tool != "scale_deployment" {
		t.Fatalf("tool calls = %+v, want scale_deployment once", calls)
	}

	var last slacktest.Call
	s.fake.Eventually(t, "the status message edited after the run", func() bool {
		for _, c := range s.fake.Calls("chat.update") {
			if c.TS == status.TS && c.OK() {
				last = c
			}
		}
		return strings.Contains(last.Form.Get("blocks"), "the answer is below")
	})
	for _, field := range []string{"text", "blocks"} {
		got := strings.ToLower(last.Form.Get(field))
		if strings.Contains(got, "awaiting approval") || strings.Contains(got, "waiting for approval") {
			t.Errorf("last chat.update of the status message still waits; %s = %q", field, last.Form.Get(field))
		}
	}
	m, _ := s.fake.Message(chOps, status.TS)
	if got := m.Plain(); !strings.Contains(got, "Scaling web.") || !strings.Contains(got, "✅ scale_deployment") ||
		!strings.Contains(got, "Done: the answer is below.") {
		t.Errorf("status message after the run = %q, want its text, the call done and the end", got)
	}
	if n := len(s.fake.BotReplies(chOps, root)); n != 3 {
		t.Errorf("%d bot messages in the thread, want the status message, the card and the answer", n)
	}
}
