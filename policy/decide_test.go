package policy

import (
	"fmt"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// proposed is an approval as the engine would store it: the call and its
// verdict.
func proposed(p core.Policy, c core.PolicyCall) core.Approval {
	return core.Approval{ID: "a1", ConvKey: c.ConvKey, Toolset: c.Server, Tool: c.Tool, Arguments: c.Arguments,
		Risk: c.Risk, Requester: c.Requester, Status: core.ApprovalPending, Verdict: p.Classify(c)}
}

func TestMayDecide(t *testing.T) {
	platforms := map[string][]string{"slack": {"slack:U0BOB"}, "telegram": {"telegram:999"}}
	p := mustParse(t, matchPolicy, Options{PlatformApprovers: platforms,
		ScheduleApprovers: map[string][]string{"morning-health": {"sre"}}})
	opts := Options{PlatformApprovers: platforms, ScheduleApprovers: map[string][]string{"nightly": {"telegram:999"}}}
	// The same people with no approvers named anywhere: the platform's.
	open := mustParse(t, `
people:
  alice: {slack: U0ALICE, telegram: "12345678"}
  bob:   {slack: U0BOB, telegram: "87654321"}
`, opts)
	prod := call("k8s", "deployments_patch", core.RiskWrite, "slack:U0ALICE", `{"namespace":"prod"}`)
	const notAlice = "Only bob or carol (approvers: sre) may decide this request."
	for _, tc := range []struct {
		name   string
		p      core.Policy
		c      core.PolicyCall
		who    string
		ok     bool
		reason string
	}{
		{"two-person rule: another sre", p, prod, "slack:U0BOB", true, ""},
		{"two-person rule: carol on discord", p, prod, "discord:1400000000000000001", true, ""},
		{"two-person rule: the requester", p, prod, "slack:U0ALICE", false,
			"You asked for this yourself and self-approval is off for rule prod-changes-need-two. " + notAlice},
		{"two-person rule: the requester on another platform", p, prod, "telegram:12345678", false,
			"You asked for this yourself and self-approval is off for rule prod-changes-need-two. " + notAlice},
		{"two-person rule: not an approver", p, prod, "telegram:55555", false, notAlice},
		{"two-person rule: an unknown identity", p, prod, "slack:U0MALLORY", false, notAlice},
		{"nobody clicked", p, prod, "", false, notAlice},
		{"defaults: requester in sre", p, call("k8s", "pods_exec", core.RiskWrite, "slack:U0ALICE", `{}`), "telegram:12345678", true, ""},
		{"defaults: dev may not", p, call("k8s", "pods_exec", core.RiskWrite, "slack:U0ALICE", `{}`), "telegram:55555", false,
			"Only the requester (slack:U0ALICE), bob or carol (approvers: sre) may decide this request."},
		{"defaults: a dev's own request", p, call("k8s", "pods_exec", core.RiskWrite, "telegram:55555", `{}`), "telegram:55555", false,
			"Only alice, bob or carol (approvers: sre) may decide this request."},
		{"schedule: its approvers", p, call("k8s", "pods_exec", core.RiskWrite, "schedule:morning-health", `{}`), "slack:U0CAROL", true, ""},
		{"no approvers named: requester", open, call("k8s", "pods_exec", core.RiskWrite, "slack:U0ALICE", `{}`), "telegram:12345678", true, ""},
		{"no approvers named: the platform's, folded", open, call("k8s", "pods_exec", core.RiskWrite, "slack:U0ALICE", `{}`), "telegram:87654321", true, ""},
		{"no approvers named: another platform's", open, call("k8s", "pods_exec", core.RiskWrite, "slack:U0ALICE", `{}`), "telegram:999", false,
			"Only the requester (slack:U0ALICE) or bob may decide this request."},
		{"schedule without a policy file: its identities", mustLoad(t, "", opts),
			call("k8s", "pods_exec", core.RiskWrite, "schedule:nightly", `{}`), "telegram:999", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := proposed(tc.p, tc.c)
			if a.Verdict.Action != core.ActionAsk {
				t.Fatalf("verdict %+v, want ask", a.Verdict)
			}
			got := tc.p.MayDecide(a, core.Actor{ID: tc.who})
			if got.Allowed != tc.ok || got.Reason != tc.reason {
				t.Errorf("MayDecide(%s) = %+v, want allowed %v %q", tc.who, got, tc.ok, tc.reason)
			}
		})
	}
}

func mustLoad(t *testing.T, file string, opts Options) *Policy {
	t.Helper()
	p, err := Load(file, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScheduleRuns: a schedule's run goes to the schedule's approvers,
// never to itself, and a run nobody may approve is denied at once with the
// reason instead of waiting for its expiry.
func TestScheduleRuns(t *testing.T) {
	p := mustParse(t, "people: {alice: {slack: U0ALICE}}\n", Options{
		ScheduleApprovers: map[string][]string{"morning-health": {"alice"}},
	})
	v := p.Classify(call("k8s", "pods_exec", core.RiskWrite, "schedule:morning-health", `{}`))
	if v.Action != core.ActionAsk || v.SelfApproval || len(v.Eligible) != 1 || v.Eligible[0] != "alice" {
		t.Errorf("scheduled write: %+v, want ask alice without self-approval", v)
	}
	v = p.Classify(call("k8s", "pods_exec", core.RiskWrite, "schedule:other", `{}`))
	if v.Action != core.ActionDeny || v.Reason != "nobody may approve this request (no approvers are configured for it)" {
		t.Errorf("scheduled write without approvers: %+v, want a deny saying why", v)
	}
	if _, err := Parse("p.yaml", nil, Options{ScheduleApprovers: map[string][]string{"x": {"sre"}}}); err == nil ||
		err.Error() != `policy: schedule "x": approvers: unknown role or person "sre" (roles: none; people: none)` {
		t.Errorf("unknown schedule approver: %v", err)
	}
	if _, err := Load("", Options{ScheduleApprovers: map[string][]string{"x": {"sre"}}}); err == nil ||
		err.Error() != `policy: schedule "x": approvers: "sre" is not an identity such as slack:U0BOB (roles and people need a policy file)` {
		t.Errorf("schedule approver by name without a file: %v", err)
	}
}

// TestUnreachableQuorumDenies: self-approval off takes the requester out,
// and a quorum the others cannot reach is a deny that says why.
func TestUnreachableQuorumDenies(t *testing.T) {
	p := mustParse(t, `
people: {alice: {slack: U0ALICE}, bob: {slack: U0BOB}}
defaults: {approvers: [alice, bob], quorum: 2, self_approval: false}
`, Options{})
	v := p.Classify(call("k8s", "pods_exec", core.RiskWrite, "slack:U0ALICE", `{}`))
	if v.Action != core.ActionDeny || v.Reason != "it needs 2 approvals but only 1 person may approve (bob)" {
		t.Errorf("alice's request: %+v", v)
	}
	if got := v.Denial(); got != "denied by policy: it needs 2 approvals but only 1 person may approve (bob)" {
		t.Errorf("Denial() = %q", got)
	}
	if v := p.Classify(call("k8s", "pods_exec", core.RiskWrite, "slack:U0CAROL", `{}`)); v.Action != core.ActionAsk {
		t.Errorf("carol's request: %+v, want ask", v)
	}
}

// TestDecisionUsesStoredVerdict: a decision is checked against the
// verdict stored with the approval, not a policy reloaded since; an
// approval stored without one is classified with the current policy.
func TestDecisionUsesStoredVerdict(t *testing.T) {
	src := "people: {alice: {slack: U0ALICE}, bob: {slack: U0BOB}}\ndefaults: {approvers: [%s]}\n"
	before := mustParse(t, fmt.Sprintf(src, "bob"), Options{})
	after := mustParse(t, fmt.Sprintf(src, "alice"), Options{})
	a := proposed(before, call("k8s", "pods_exec", core.RiskWrite, "slack:U0CAROL", `{}`))
	if !after.MayDecide(a, core.Actor{ID: "slack:U0BOB"}).Allowed || after.MayDecide(a, core.Actor{ID: "slack:U0ALICE"}).Allowed {
		t.Errorf("the stored verdict did not decide")
	}
	a.Verdict = core.Verdict{}
	if after.MayDecide(a, core.Actor{ID: "slack:U0BOB"}).Allowed || !after.MayDecide(a, core.Actor{ID: "slack:U0ALICE"}).Allowed {
		t.Errorf("an approval without a verdict was not classified with the current policy")
	}
}
