package rendertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

func testApprovalOutcomes(t *testing.T, e Env) {
	outcomes := []struct {
		status core.ApprovalStatus
		want   string
	}{
		{core.ApprovalApproved, "approved by @bob"},
		{core.ApprovalDenied, "denied by @bob: not during the freeze"},
		{core.ApprovalExpired, "expired"},
		{core.ApprovalSuperseded, "superseded"},
		{core.ApprovalCancelled, "cancelled"},
	}
	for i, o := range outcomes {
		t.Run(string(o.status), func(t *testing.T) {
			conv := e.NewConv()
			run := fmt.Sprintf("run-approval-%d", i)
			s := NewScript(conv, run)
			a := NewApproval(conv, run, fmt.Sprintf("%032x", 0xfeed0000+i))
			send(t, e, s.Event(core.EventGenerationStart), s.Text(core.EventToken, "I will scale web to 3."),
				s.Text(core.EventGenerationComplete, "I will scale web to 3."),
				s.Approval(core.EventToolAwaitingApproval, a), s.Completed(core.RunAwaitingApproval, ""))
			flush(t, e)
			msgs := e.Messages(conv)
			if len(msgs) != 2 {
				t.Fatalf("want the draft and a card, got %+v", msgs)
			}
			draft, card := msgs[0], msgs[1]
			if !strings.Contains(draft.Text, "I will scale web to 3.") || len(draft.Buttons) != 0 {
				t.Errorf("draft = %+v, want its text and no buttons once paused", draft)
			}
			if !strings.Contains(card.Text, "scale_deployment") || !strings.Contains(card.Text, "@alice") || !strings.Contains(card.Text, `"replicas": 3`) {
				t.Errorf("card should name the tool, the requester and the arguments: %q", card.Text)
			}
			checkCardButtons(t, e, card, a.ID)

			decided := a
			decided.Status = o.status
			if o.status == core.ApprovalApproved || o.status == core.ApprovalDenied {
				decided.DecidedBy = core.Actor{ID: "u-bob", Name: "@bob"}
				decided.DecidedAt = time.Now()
			}
			if o.status == core.ApprovalDenied {
				decided.Reason = "not during the freeze"
			}
			evType := core.EventToolDenied
			if o.status == core.ApprovalApproved {
				evType = core.EventToolApproved
			}
			send(t, e, s.Event(core.EventReady), s.Approval(evType, decided))
			if o.status == core.ApprovalApproved {
				send(t, e, s.Tool(core.EventToolExecuting, a.CallID, a.Tool, string(a.Arguments)),
					s.Tool(core.EventToolResult, a.CallID, a.Tool, string(a.Arguments)))
			}
			send(t, e, s.Event(core.EventGenerationStart), s.Text(core.EventToken, "Done here."), s.Completed(core.RunDone, "Done here."))
			flush(t, e)
			msgs = e.Messages(conv)
			var got *Message
			for i := range msgs {
				if msgs[i].ID == card.ID {
					got = &msgs[i]
				}
			}
			if got == nil {
				t.Fatalf("card message %s disappeared: %+v", card.ID, msgs)
			}
			if !strings.Contains(strings.ToLower(got.Text), strings.ToLower(o.want)) {
				t.Errorf("card after %s = %q, want it to say %q", o.status, got.Text, o.want)
			}
			if len(got.Buttons) != 0 {
				t.Errorf("card after %s still has buttons: %v", o.status, got.Buttons)
			}
			if n := countContaining(msgs, "Approval needed"); n != 1 {
				t.Errorf("%d approval cards, want 1", n)
			}
			if !strings.Contains(msgs[len(msgs)-1].Text, "Done here.") {
				t.Errorf("the resumed run should continue below the card: %+v", msgs)
			}
			// The paused draft no longer says it waits: it points below.
			for _, m := range msgs {
				if m.ID != draft.ID {
					continue
				}
				low := strings.ToLower(m.Text)
				if strings.Contains(low, "awaiting approval") || strings.Contains(low, "waiting for approval") ||
					!strings.Contains(m.Text, "the answer is below") || !strings.Contains(m.Text, "I will scale web to 3.") {
					t.Errorf("paused draft after the run went on = %q, want its text, no waiting, and a pointer to the answer below", m.Text)
				}
			}
		})
	}
}

func checkCardButtons(t *testing.T, e Env, card Message, id string) {
	t.Helper()
	if len(card.Buttons) != 2 {
		t.Fatalf("card buttons = %v, want Approve and Deny", card.Buttons)
	}
	for i, want := range []string{render.ActionApprove, render.ActionDeny} {
		b := card.Buttons[i]
		act, got, ok := render.ParseButtonData(b.Data)
		if !ok || act != want || got != id || len(b.Data) > maxData(e) {
			t.Errorf("button %q data %q: want action %q for approval %s within %d bytes", b.Label, b.Data, want, id, maxData(e))
		}
		if strings.Contains(b.Data, "replicas") {
			t.Errorf("button data carries the arguments: %q", b.Data)
		}
	}
	if !strings.Contains(strings.ToLower(card.Buttons[0].Label), "approve") || !strings.Contains(strings.ToLower(card.Buttons[1].Label), "deny") {
		t.Errorf("button labels = %q, %q", card.Buttons[0].Label, card.Buttons[1].Label)
	}
}

func countContaining(msgs []Message, s string) int {
	n := 0
	for _, m := range msgs {
		if strings.Contains(m.Text, s) {
			n++
		}
	}
	return n
}

func testRedeliveredCard(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-redeliver")
	a := NewApproval(conv, s.Run, fmt.Sprintf("%032x", 0xabc))
	ev := s.Approval(core.EventToolAwaitingApproval, a)
	send(t, e, ev, ev, s.Completed(core.RunAwaitingApproval, ""))
	flush(t, e)
	if n := countContaining(e.Messages(conv), "Approval needed"); n != 1 {
		t.Errorf("%d approval cards for one request, want 1", n)
	}
}

// testQuorumVote: a vote short of the quorum, which the engine sends as
// the request again with its votes after the run paused, changes the
// card (the votes so far, buttons kept) and nothing else: no new message.
func testQuorumVote(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-quorum")
	a := NewApproval(conv, s.Run, fmt.Sprintf("%032x", 0xabd))
	a.Verdict.Quorum = 2
	send(t, e, s.Event(core.EventGenerationStart), s.Text(core.EventToken, "I will scale web to 3."),
		s.Approval(core.EventToolAwaitingApproval, a), s.Completed(core.RunAwaitingApproval, ""))
	flush(t, e)
	voted := a
	voted.Votes = []core.Vote{{Person: "bob", Actor: core.Actor{ID: "u-bob", Name: "@bob"}, Approve: true}}
	send(t, e, s.Approval(core.EventToolAwaitingApproval, voted))
	flush(t, e)
	msgs := e.Messages(conv)
	if len(msgs) != 2 {
		t.Fatalf("after one of two votes: %d messages, want the draft and the card: %+v", len(msgs), msgs)
	}
	if card := msgs[1]; !strings.Contains(card.Text, "1 of 2 approvals: @bob") || len(card.Buttons) != 2 {
		t.Errorf("card after one of two votes = %q with %d buttons, want the votes and both buttons", card.Text, len(card.Buttons))
	}
}
