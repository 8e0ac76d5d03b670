package render

import (
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// A card of a quorum request shows its progress and keeps its buttons; the
// decided card names every approver.
func TestCardShowsQuorumProgress(t *testing.T) {
	bob := core.Vote{Person: "bob", Actor: core.Actor{ID: "slack:U0BOB", Name: "@bob"}, Approve: true}
	carol := core.Vote{Person: "carol", Actor: core.Actor{ID: "telegram:7", Name: "@carol"}, Approve: true}
	a := core.Approval{ID: "a1", Tool: "scale_deployment", Status: core.ApprovalPending,
		Verdict: core.Verdict{Action: core.ActionAsk, Quorum: 2}, Arguments: []byte(`{"replicas":3}`)}

	m := cardMessage(a, 64)
	if !strings.Contains(m.Text, "0 of 2 approvals") || len(m.Buttons) != 2 {
		t.Errorf("new quorum card = %q with %d buttons, want 0 of 2 and buttons", m.Text, len(m.Buttons))
	}
	a.Votes = []core.Vote{bob}
	m = cardMessage(a, 64)
	if !strings.Contains(m.Text, "1 of 2 approvals: @bob") || len(m.Buttons) != 2 {
		t.Errorf("card after one vote = %q with %d buttons, want 1 of 2: @bob and buttons", m.Text, len(m.Buttons))
	}
	a.Votes, a.Status, a.DecidedBy = []core.Vote{bob, carol}, core.ApprovalApproved, carol.Actor
	m = cardMessage(a, 64)
	if !strings.Contains(m.Text, "Approved by @bob and @carol") || len(m.Buttons) != 0 {
		t.Errorf("approved card = %q with %d buttons, want both approvers and no buttons", m.Text, len(m.Buttons))
	}
}
