package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/timeline"
)

// GET …/timeline: the steps of a conversation (an alert, carol's request,
// alice's approval through the API, the write) for a token that may see
// it; the answer to a missing conversation for one that may not; 403 for
// a visible one without the read scope.
func TestAPITimeline(t *testing.T) {
	fired := timeline.AlertChange{Name: "HighErrorRate", Severity: "critical", Receiver: "ops", At: time.Now().Add(-time.Minute), Received: time.Now()}
	r := newRig(t, func(o *httpapi.Options, _ *enginetest.Stack) { o.Alerts = alertLog{conv: {fired}} })
	a := r.pauseForScale()
	if status, raw := r.do(r.tokens["alice"], "POST", "/api/v1/approvals/"+a.ID+"/decision", strings.NewReader(`{"decision":"approve"}`)); status != 200 {
		t.Fatalf("decision = %d %s", status, raw)
	}
	r.rec.WaitCompleted(t, 2)

	path := "/api/v1/conversations/" + url.PathEscape(conv) + "/timeline"
	status, raw := r.do(r.tokens["bob"], "GET", path, nil)
	var tl timeline.Timeline
	if err := json.Unmarshal(raw, &tl); status != 200 || err != nil {
		t.Fatalf("GET timeline = %d %s (%v)", status, raw, err)
	}
	var steps []string
	for _, s := range tl.Steps {
		steps = append(steps, string(s.Kind)+" "+s.Actor)
	}
	want := "alert.fired Alertmanager ops\nmessage carol\napproval.asked carol\napproval.decided alice\ntool.call alice\nanswer opsgate"
	if strings.Join(steps, "\n") != want {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(steps, "\n"), want)
	}
	if len(tl.Changes) != 1 || tl.Changes[0].Tool != "k8s/scale_deployment" {
		t.Errorf("changes = %+v", tl.Changes)
	}

	// dave sees nothing of the conversation: the same 404 as a missing one.
	dave := r.token(t, "dave", httpapi.DefaultScopes)
	status, raw = r.do(dave, "GET", path, nil)
	status2, raw2 := r.do(dave, "GET", "/api/v1/conversations/"+url.PathEscape("telegram:bot:none")+"/timeline", nil)
	code, _ := errorCode(t, raw)
	code2, _ := errorCode(t, raw2)
	if status != http.StatusNotFound || status2 != http.StatusNotFound || code != code2 || code != "not_found" {
		t.Errorf("dave: %d %s and for a missing one %d %s, want the same 404", status, raw, status2, raw2)
	}
	// A token that may see it but lacks read.
	writer := r.token(t, "bob", []string{httpapi.ScopeWrite})
	if status, raw := r.do(writer, "GET", path, nil); status != http.StatusForbidden {
		t.Errorf("without read: %d %s, want 403", status, raw)
	}
}

// alertLog is the alerts an intake recorded, by conversation.
type alertLog map[string][]timeline.AlertChange

func (l alertLog) AlertChanges(_ context.Context, key string) ([]timeline.AlertChange, error) {
	return l[key], nil
}

// token creates a token of person with scopes.
func (r *rig) token(t *testing.T, person string, scopes []string) string {
	t.Helper()
	secret, tok, err := httpapi.NewToken(person, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tok.Scopes = scopes
	if err := r.stack.Store.CreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	return secret
}
