package httpapi_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// The audit log's free-text q matches any field of an entry, ignoring
// case, before limit cuts the list.
func TestAPIAuditSearch(t *testing.T) {
	r := newRig(t)
	a := r.pauseForScale()
	bob, alice := r.tokens["bob"], r.tokens["alice"]
	r.do(bob, "POST", "/api/v1/approvals/"+a.ID+"/decision", strings.NewReader(`{"decision":"approve"}`))
	r.do(alice, "POST", "/api/v1/approvals/"+a.ID+"/decision", strings.NewReader(`{"decision":"approve","reason":"Change ticket CHG-4711"}`))
	r.rec.WaitCompleted(t, 2)

	search := func(query string) []core.AuditEntry {
		t.Helper()
		status, raw := r.do(bob, "GET", "/api/v1/audit?"+query, nil)
		var b struct{ Entries []core.AuditEntry }
		if err := json.Unmarshal(raw, &b); status != 200 || err != nil {
			t.Fatalf("GET audit?%s = %d %s", query, status, raw)
		}
		return b.Entries
	}
	all := search("")
	if len(all) < 3 {
		t.Fatalf("audit has %d entries, want the request, the refusal, the approval and more", len(all))
	}
	for _, tc := range []struct {
		name, query, term string // term: what every entry found holds
		atLeast, atMost   int
	}{
		{"a person, another case", "q=" + url.QueryEscape("API:ALICE"), "api:alice", 1, len(all) - 1},
		{"a word of a reason", "q=chg-4711", "CHG-4711", 1, len(all) - 1},
		{"an approval id", "q=" + a.ID, a.ID, 2, len(all)},
		{"a tool, with another filter", "q=SCALE_deployment&conversation=" + url.QueryEscape(conv), "scale_deployment", 1, len(all)},
		{"before limit", "q=refused&limit=1", "refused", 1, 1},
		{"no match", "q=nothing-like-this", "", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := search(tc.query)
			if len(got) < tc.atLeast || len(got) > tc.atMost {
				t.Fatalf("%d entries, want %d to %d: %+v", len(got), tc.atLeast, tc.atMost, got)
			}
			for _, e := range got {
				raw, _ := json.Marshal(e)
				if !strings.Contains(strings.ToLower(string(raw)), strings.ToLower(tc.term)) {
					t.Errorf("entry without %q: %s", tc.term, raw)
				}
			}
		})
	}
	// limit keeps the last matches: the refusal is bob's, and it is found
	// although later entries exist.
	if got := search("q=refused&limit=1"); len(got) != 1 || got[0].Actor.ID != "api:bob" {
		t.Errorf("q=refused&limit=1 = %+v, want bob's refusal", got)
	}
}
