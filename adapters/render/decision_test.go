package render_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

func TestDecisionReplyCoversEveryDecideResult(t *testing.T) {
	a := core.Approval{Tool: "scale_deployment", Requester: core.Actor{ID: "u1", Name: "alice"},
		Status: core.ApprovalApproved, DecidedBy: core.Actor{ID: "u2", Name: "bob"}}
	tests := []struct {
		name    string
		approve bool
		err     error
		want    string
		alert   bool
	}{
		{"approved", true, nil, "Approved: running scale_deployment", false},
		{"denied", false, nil, "Denied: scale_deployment will not run", false},
		{"not allowed", true, fmt.Errorf("core: %w", &core.NotAllowedError{Reason: "Only the requester (alice) or bob may decide this request."}),
			"not allowed to decide this request. Only the requester (alice) or bob may decide this request. Your attempt was recorded.", true},
		{"not allowed, no reason", true, fmt.Errorf("core: %w", core.ErrNotAllowed), "not allowed to decide this request", true},
		{"already voted", true, core.ErrAlreadyVoted, "already counted (0 of 1 approvals)", false},
		{"already decided", false, core.ErrAlreadyDecided, "already decided: approved by bob", false},
		{"expired", true, core.ErrExpired, "expired; nothing was run", true},
		{"not found", true, core.ErrNotFound, "no longer exists", true},
		{"hash mismatch", true, core.ErrHashMismatch, "action changed", true},
		{"store failure", true, errors.New("database is locked"), "could not be recorded", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, alert := render.DecisionReply(a, tt.approve, tt.err)
			if !strings.Contains(text, tt.want) || alert != tt.alert {
				t.Errorf("DecisionReply = %q, alert %v; want it to contain %q, alert %v", text, alert, tt.want, tt.alert)
			}
		})
	}
	// A vote that does not reach the quorum says how far it is.
	partial := a
	partial.Status, partial.Verdict.Quorum = core.ApprovalPending, 2
	partial.Votes = []core.Vote{{Person: "bob", Actor: core.Actor{ID: "u2", Name: "bob"}, Approve: true}}
	if text, alert := render.DecisionReply(partial, true, nil); !strings.Contains(text, "counted: 1 of 2 approvals: bob") || alert {
		t.Errorf("DecisionReply of a partial approval = %q, alert %v", text, alert)
	}
}

// Issue 22 acceptance 5: the chats' reply to a refused decision comes
// from core's one table of error kinds, for every kind: its mark first,
// its description, its alert.
func TestDecisionReplyOfEveryKindComesFromTheKindTable(t *testing.T) {
	a := core.Approval{Tool: "scale_deployment", Status: core.ApprovalApproved, DecidedBy: core.Actor{ID: "u2", Name: "bob"}}
	for _, k := range core.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			info := k.Info()
			err := fmt.Errorf("core: decide: %w", core.NewKindError(k, "the store's words, never shown"))
			text, alert := render.DecisionReply(a, true, err)
			if alert != info.Alert {
				t.Errorf("alert = %v, want the table's %v", alert, info.Alert)
			}
			if !strings.HasPrefix(text, info.Mark) {
				t.Errorf("%q does not start with the table's mark %q", text, info.Mark)
			}
			if !strings.Contains(strings.ToLower(text), info.Text) {
				t.Errorf("%q lacks the table's description %q", text, info.Text)
			}
			if strings.Contains(text, "never shown") {
				t.Errorf("%q shows the error's own text", text)
			}
			if got := render.Refusal(a, err); !strings.Contains(text, got) {
				t.Errorf("reply %q does not say Refusal's %q", text, got)
			}
		})
	}
}
