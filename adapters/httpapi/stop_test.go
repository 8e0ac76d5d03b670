package httpapi_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
)

// scopedToken stores a token of person with scopes and returns its secret.
func (r *rig) scopedToken(person string, scopes ...string) string {
	r.t.Helper()
	secret, tok, err := httpapi.NewToken(person, time.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	tok.Scopes = scopes
	if err := r.stack.Store.CreateToken(r.t.Context(), tok); err != nil {
		r.t.Fatal(err)
	}
	return secret
}

// Issue 22 acceptance 5: one stop rule. The API asks policy.MayStop, as
// every chat does: a token that may post (write) or decide (approve) may
// stop the run; one that may only read may not.
func TestAPIStopFollowsMayStop(t *testing.T) {
	r := newRig(t)
	a := r.pauseForScale()
	stop := "/api/v1/runs/" + a.RunID + "/stop"
	status, raw := r.do(r.scopedToken("alice", httpapi.ScopeRead), "POST", stop, nil)
	if code, msg := errorCode(t, raw); status != 403 || code != "insufficient_scope" || !bytes.Contains(raw, []byte("write or approve")) {
		t.Errorf("a read token's stop = %d %s %q, want 403 insufficient_scope naming write or approve", status, code, msg)
	}
	status, raw = r.do(r.scopedToken("alice", httpapi.ScopeRead, httpapi.ScopeApprove), "POST", stop, nil)
	if status != 200 || !bytes.Contains(raw, []byte(`"stopped":true`)) {
		t.Errorf("an approver's (read,approve) stop = %d %s, want stopped", status, raw)
	}
}
