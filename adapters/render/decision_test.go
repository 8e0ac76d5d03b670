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
		{"not allowed", true, fmt.Errorf("core: %w", core.ErrNotAllowed), "not allowed to decide this request: only the requester (alice)", true},
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
}
