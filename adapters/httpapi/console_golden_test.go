package httpapi_test

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/browsertest"
	"github.com/opsgate/opsgate/internal/golden"
)

// consoleCardStates are the approval cards of the golden file: the
// request as the API sends it (core.Approval's JSON), in every state.
func consoleCardStates() []struct {
	name string
	a    core.Approval
} {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	bob := core.Actor{ID: "api:bob", Name: "bob"}
	carol := core.Actor{ID: "telegram:1003", Name: "carol"}
	pending := core.Approval{ID: "0a1b2c3d4e5f60718293a4b5c6d7e8f9", RunID: "run-7f3e9a2b5c4d", ConvKey: "telegram:bot:42", CallID: "c1",
		Toolset: "k8s", Tool: "scale_deployment", Arguments: json.RawMessage(`{"name":"web","namespace":"prod","replicas":3}`),
		ActionHash: "3f1c2a9b8d7e6f50aa11bb22cc33dd44ee55ff6677889900aabbccddeeff0011", Risk: core.RiskWrite,
		Requester: carol, Status: core.ApprovalPending, Verdict: core.Verdict{Action: core.ActionAsk, Quorum: 1},
		CreatedAt: at, ExpiresAt: at.Add(30 * time.Minute)}
	decided := func(st core.ApprovalStatus, by core.Actor, reason string) core.Approval {
		a := pending
		a.Status, a.DecidedBy, a.Reason = st, by, reason
		if by.ID != "" {
			a.DecidedAt = at.Add(5 * time.Minute)
			a.Votes = []core.Vote{{Person: by.Name, Actor: by, Approve: st == core.ApprovalApproved, Reason: reason, At: a.DecidedAt}}
		}
		return a
	}
	destructive := pending
	destructive.Tool, destructive.Risk, destructive.Arguments = "delete_namespace", core.RiskDestructive, json.RawMessage(`{"name":"staging"}`)
	partial := pending
	partial.Verdict.Quorum = 2
	partial.Votes = []core.Vote{{Person: "bob", Actor: bob, Approve: true, At: at.Add(2 * time.Minute)}}
	quorum := decided(core.ApprovalApproved, carol, "")
	quorum.Verdict.Quorum = 2
	quorum.Votes = append([]core.Vote{{Person: "bob", Actor: bob, Approve: true, At: at.Add(2 * time.Minute)}}, quorum.Votes...)
	previewed := pending
	previewed.Tool = "resources_create_or_update"
	previewed.Preview = &core.Preview{Status: core.PreviewReady, Summary: "Deployment prod/web: changes containers[api].image",
		Diff: "       - name: api\n-        image: registry.example/web:1.4\n+        image: registry.example/web:1.5", Hash: "9c1f"}
	waiting := pending
	waiting.Preview = &core.Preview{Status: core.PreviewPending}
	stale := decided(core.ApprovalApproved, bob, "")
	stale.Preview = &core.Preview{Status: core.PreviewReady, Summary: "replicas: 2 → 3", Diff: "-replicas: 2\n+replicas: 3", Hash: "9c1f",
		Stale: `not run: changed since it was approved: was "replicas: 2 → 3", now "replicas: 4 → 3"; asked again in a new request`}
	return []struct {
		name string
		a    core.Approval
	}{
		{"pending", pending},
		{"pending, preview being worked out", waiting},
		{"pending with a preview", previewed},
		{"approved, then stale", stale},
		{"pending destructive", destructive},
		{"partially voted", partial},
		{"approved", decided(core.ApprovalApproved, bob, "")},
		{"approved by a quorum", quorum},
		{"denied", decided(core.ApprovalDenied, bob, "not during the freeze")},
		{"expired", decided(core.ApprovalExpired, core.Actor{}, "")},
		{"superseded", decided(core.ApprovalSuperseded, core.Actor{}, "")},
		{"cancelled", decided(core.ApprovalCancelled, core.Actor{}, "stopped")},
	}
}

// Issue 22 acceptance 4: a golden file of the web console's approval
// card in every state, as the console's own card.js builds it in a real
// headless Chromium from the JSON the API sends (testdata/golden;
// -update rewrites it). The clock and the locale are pinned in the page
// so that "Asked … ago" and its title do not change from run to run.
func TestConsoleCardGolden(t *testing.T) {
	b := browsertest.New(t)
	srv := httptest.NewServer(httpapi.Console())
	t.Cleanup(srv.Close)
	b.Navigate(srv.URL + "/")
	b.WaitVisible("#token")

	states := consoleCardStates()
	approvals := make([]core.Approval, len(states))
	for i, s := range states {
		approvals[i] = s.a
	}
	raw, err := json.Marshal(approvals)
	if err != nil {
		t.Fatal(err)
	}
	got := b.Eval(`(async () => {
		Date.now = () => Date.parse("2026-03-02T09:07:00Z");
		Date.prototype.toLocaleString = function () { return this.toISOString(); };
		const {ApprovalCard} = await import("/console/card.js");
		return JSON.stringify(` + string(raw) + `.map((a) => new ApprovalCard(a, {showConversation: true}).el.outerHTML));
	})()`)
	var cards []string
	if err := json.Unmarshal([]byte(got), &cards); err != nil || len(cards) != len(states) {
		t.Fatalf("%d cards rendered (%v), want %d:\n%s", len(cards), err, len(states), got)
	}
	// One element a line, for reading: a break between two tags.
	var out strings.Builder
	for i, s := range states {
		out.WriteString("<!-- " + s.name + " -->\n" + strings.ReplaceAll(cards[i], "><", ">\n<") + "\n\n")
	}
	golden.Check(t, filepath.Join("testdata", "golden", "console-cards.html"), []byte(out.String()))
}
