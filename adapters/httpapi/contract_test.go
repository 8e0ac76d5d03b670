package httpapi_test

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 20 acceptance 9 (HTTP contract, docs/design.md §16): following a
// conversation that does not exist, or a run it never had, is 404 with a
// JSON error, not a stream held open.
func TestAPIContractFollowUnknownIs404(t *testing.T) {
	r := newRig(t)
	bob := r.tokens["bob"]
	r.stack.LLM.Push(llmfake.Reply{Text: "hello"})
	if err := r.eng.Handle(t.Context(), core.Inbound{ConvKey: "api:known", MessageID: "m1", User: carol, Text: "hi", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	done := r.rec.WaitCompleted(t, 1)
	r.expectErrors(t, []badRequest{
		{"API conversation not started yet", bob, "GET", "/api/v1/conversations/api:not-yet/events", "", 404, "not_found"},
		{"platform conversation", bob, "GET", "/api/v1/conversations/" + url.PathEscape("slack:T0:C0") + "/events", "", 404, "not_found"},
		{"unknown run", bob, "GET", "/api/v1/conversations/api:known/events?run=nope", "", 404, "not_found"},
		{"run of another conversation", bob, "GET", "/api/v1/conversations/api:not-yet/events?run=" + done.RunID, "", 404, "not_found"},
	})
	// The known ones still stream.
	s := r.open(bob, "GET", "/api/v1/conversations/api:known/events?run="+done.RunID, "", "")
	if got := s.readUntil(t, isCompleted); len(got) == 0 || got[len(got)-1].Data.RunID != done.RunID {
		t.Errorf("?run= of a known run streamed %v", streamStamps(got))
	}
}

// Issue 20 acceptance 9: a known path with a wrong method is 405
// method_not_allowed with Allow, for every route under /api/v1; an
// unknown path stays 404.
func TestAPIContractWrongMethodIs405(t *testing.T) {
	r := newRig(t)
	bob := r.tokens["bob"]
	for _, tc := range []struct {
		method, path, allow string
	}{
		{"POST", "/api/v1/conversations", "GET, HEAD"},
		{"DELETE", "/api/v1/conversations/api:x", "GET, HEAD"},
		{"GET", "/api/v1/conversations/api:x/messages", "POST"},
		{"PUT", "/api/v1/conversations/api:x/messages", "POST"},
		{"POST", "/api/v1/conversations/api:x/events", "GET, HEAD"},
		{"POST", "/api/v1/approvals", "GET, HEAD"},
		{"GET", "/api/v1/approvals/a1/decision", "POST"},
		{"GET", "/api/v1/runs/r1/stop", "POST"},
		{"PATCH", "/api/v1/audit", "GET, HEAD"},
		{"POST", "/api/v1/memory/search", "GET, HEAD"},
		{"DELETE", "/api/v1/schedules", "GET, HEAD"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, r.srv.URL+tc.path, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+bob)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw := make([]byte, 4096)
			n, _ := resp.Body.Read(raw)
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("status = %d %s, want 405", resp.StatusCode, raw[:n])
			}
			if code, _ := errorCode(t, raw[:n]); code != "method_not_allowed" {
				t.Errorf("code = %q, want method_not_allowed", code)
			}
			allow := strings.Split(resp.Header.Get("Allow"), ", ")
			sort.Strings(allow)
			if got := strings.Join(allow, ", "); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
		})
	}
	r.expectErrors(t, []badRequest{
		{"unknown path", bob, "GET", "/api/v1/nothing-here", "", 404, "not_found"},
		{"unknown path, other method", bob, "POST", "/api/v1/conversations/api:x/nothing", "", 404, "not_found"},
		{"no token, wrong method", "", "GET", "/api/v1/runs/r1/stop", "", 401, "unauthorized"},
	})
}

// Issue 20 acceptance 9: a JSON body with a key twice, at any depth, is
// 400 bad_json (which of the two counted would be a guess), and nothing
// is stored.
func TestAPIContractDuplicateJSONKeysAre400(t *testing.T) {
	r := newRig(t)
	a := r.pauseForScale()
	alice := r.tokens["alice"]
	r.expectErrors(t, []badRequest{
		{"message, top level", alice, "POST", "/api/v1/conversations/api:dup/messages", `{"text":"hi","text":"rm -rf"}`, 400, "bad_json"},
		{"decision, top level", alice, "POST", "/api/v1/approvals/" + a.ID + "/decision", `{"decision":"deny","decision":"approve"}`, 400, "bad_json"},
		{"escaped spelling of the same key", alice, "POST", "/api/v1/approvals/" + a.ID + "/decision", `{"decision":"deny","d\u0065cision":"approve"}`, 400, "bad_json"},
		{"nested", alice, "POST", "/api/v1/conversations/api:dup/messages", `{"text":"hi","x":{"a":[{"b":1,"b":2}]}}`, 400, "bad_json"},
	})
	if got, err := r.stack.Store.Approval(t.Context(), a.ID); err != nil || got.Status != core.ApprovalPending {
		t.Errorf("approval after the bad bodies = %+v, %v; want pending", got, err)
	}
	if in, err := r.stack.Store.PendingInbound(t.Context()); err != nil || len(in) != 0 {
		t.Errorf("bad bodies stored messages: %+v %v", in, err)
	}
}
