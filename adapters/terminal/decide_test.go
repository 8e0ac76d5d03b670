package terminal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// oneApprovalScript asks one approval of scale_deployment and lets
// result say what Decide returns.
func oneApprovalScript(result func(d core.Decision) (core.Approval, error)) *scriptEngine {
	scale := approval("a1", "scale_deployment", core.RiskWrite, `{"replicas":3}`)
	return &scriptEngine{
		onHandle: func(core.Inbound) []core.Event {
			return []core.Event{{Type: core.EventReady}, {Type: core.EventToolAwaitingApproval, Approval: scale},
				{Type: core.EventCompleted, Status: core.RunAwaitingApproval}}
		},
		decideResult: result,
	}
}

// Issue 22 acceptance 5: the terminal handles every decision result the
// chats handle, in their words: each kind of core's table (already voted
// and hash mismatch included) is told as render.Refusal says it, and a
// vote short of the quorum as render.DecisionReply counts it.
func TestTerminalTellsEveryDecisionResultTheChatsTell(t *testing.T) {
	bob := core.Actor{ID: "bob", Name: "bob"}
	for _, k := range core.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			got := core.Approval{ID: "a1", Tool: "scale_deployment", Status: core.ApprovalApproved, DecidedBy: bob,
				Verdict: core.Verdict{Quorum: 2}, Votes: []core.Vote{{Person: "bob", Actor: bob, Approve: true}}}
			err := fmt.Errorf("core: decide: %w", core.NewKindError(k, "the engine's words"))
			e := oneApprovalScript(func(core.Decision) (core.Approval, error) { return got, err })
			a, out := newAdapter(t, strings.NewReader("scale\ny\n"), false, e)
			if runErr := a.Run(context.Background(), e); runErr != nil {
				t.Fatalf("Run: %v", runErr)
			}
			want := "scale_deployment: " + render.Refusal(got, err)
			if !strings.Contains(out.String(), want+"\n") && !strings.Contains(out.String(), strings.TrimSuffix(want, ".")+": core: decide:") {
				t.Errorf("output lacks the chats' refusal %q:\n%s", want, out.String())
			}
			if !strings.Contains(strings.ToLower(out.String()), k.Info().Text) {
				t.Errorf("output lacks the table's description %q:\n%s", k.Info().Text, out.String())
			}
		})
	}
	t.Run("counted, short of the quorum", func(t *testing.T) {
		got := core.Approval{ID: "a1", Tool: "scale_deployment", Status: core.ApprovalPending,
			Verdict: core.Verdict{Quorum: 2}, Votes: []core.Vote{{Person: "alice", Actor: alice, Approve: true}}}
		e := oneApprovalScript(func(core.Decision) (core.Approval, error) { return got, nil })
		a, out := newAdapter(t, strings.NewReader("scale\ny\n"), false, e)
		if err := a.Run(context.Background(), e); err != nil {
			t.Fatalf("Run: %v", err)
		}
		want, _ := render.DecisionReply(got, true, nil)
		if !strings.Contains(out.String(), want) || !strings.Contains(want, "1 of 2 approvals: alice") {
			t.Errorf("output lacks the chats' %q:\n%s", want, out.String())
		}
	})
}
