package core_test

import (
	"testing"

	"github.com/opsgate/opsgate/core"
)

// TestDefaultPolicyIsTodaysRule: without a policy file a read runs,
// anything else asks for one approval, and the requester or an approver
// configured for the conversation's platform may decide: nobody else, and
// a platform's approvers only on that platform's conversations.
func TestDefaultPolicyIsTodaysRule(t *testing.T) {
	d := core.DefaultPolicy{Approvers: map[string][]string{
		"slack":    {"slack:U0BOB"},
		"telegram": {"telegram:87654321"},
		"discord":  {"discord:1400000000000000001"},
	}}
	for risk, want := range map[core.Risk]core.Action{
		core.RiskRead: core.ActionRead, core.RiskWrite: core.ActionAsk, core.RiskDestructive: core.ActionAsk, "": core.ActionAsk,
	} {
		v := d.Classify(core.PolicyCall{Risk: risk, Requester: core.Actor{ID: "slack:U0ALICE"}, ConvKey: "slack:T1:C1"})
		if v.Action != want || want == core.ActionAsk && (v.Quorum != 1 || !v.SelfApproval) {
			t.Errorf("risk %q: %+v, want %s with quorum 1 and self-approval", risk, v, want)
		}
	}
	const requesterOnly = "Only the requester (@alice) may decide this request."
	for _, tc := range []struct {
		name, conv, requester, who string
		ok                         bool
		reason                     string
	}{
		{"requester", "slack:T1:C1", "slack:U0ALICE", "slack:U0ALICE", true, ""},
		{"requester, destructive too", "telegram:42:7", "telegram:12345678", "telegram:12345678", true, ""},
		{"slack approver on slack", "slack:T1:C1", "slack:U0ALICE", "slack:U0BOB", true, ""},
		{"telegram approver on telegram", "telegram:42:7", "telegram:12345678", "telegram:87654321", true, ""},
		{"discord approver on discord", "discord:G:C", "discord:1", "discord:1400000000000000001", true, ""},
		{"someone else", "slack:T1:C1", "slack:U0ALICE", "slack:U0MALLORY", false,
			"Only the requester (@alice) or slack:U0BOB may decide this request."},
		{"telegram approver on slack", "slack:T1:C1", "slack:U0ALICE", "telegram:87654321", false,
			"Only the requester (@alice) or slack:U0BOB may decide this request."},
		{"slack approver in the terminal", "terminal:alice", "terminal:alice", "slack:U0BOB", false, requesterOnly},
		{"nobody", "terminal:alice", "terminal:alice", "", false, requesterOnly},
		{"raw ids as adapters pass them today", "terminal:alice", "alice", "alice", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := core.PolicyCall{Server: "k8s", Tool: "pods_delete", Risk: core.RiskDestructive,
				Requester: core.Actor{ID: tc.requester, Name: "@alice"}, ConvKey: tc.conv}
			a := core.Approval{ConvKey: c.ConvKey, Toolset: c.Server, Tool: c.Tool, Risk: c.Risk, Requester: c.Requester, Verdict: d.Classify(c)}
			got := d.MayDecide(a, core.Actor{ID: tc.who})
			if got.Allowed != tc.ok || got.Reason != tc.reason {
				t.Errorf("MayDecide = %+v, want %v %q", got, tc.ok, tc.reason)
			}
			// An approval stored before verdicts existed is decided the same.
			a.Verdict = core.Verdict{}
			if again := d.MayDecide(a, core.Actor{ID: tc.who}); again != got {
				t.Errorf("without a stored verdict: %+v, with: %+v", again, got)
			}
		})
	}
}

// TestDefaultPolicySchedules: a schedule's requests go to its approvers
// and never to the schedule itself.
func TestDefaultPolicySchedules(t *testing.T) {
	d := core.DefaultPolicy{
		Approvers: map[string][]string{"slack": {"slack:U0BOB"}},
		Schedules: map[string][]string{"morning-health": {"slack:U0CAROL"}},
	}
	c := core.PolicyCall{Risk: core.RiskWrite, Requester: core.Actor{ID: "schedule:morning-health"}, ConvKey: "slack:T1:C1"}
	v := d.Classify(c)
	if v.Action != core.ActionAsk || v.SelfApproval || len(v.Eligible) != 1 || v.Eligible[0] != "slack:U0CAROL" {
		t.Fatalf("schedule verdict %+v", v)
	}
	a := core.Approval{ConvKey: c.ConvKey, Risk: c.Risk, Requester: c.Requester, Verdict: v}
	if d.MayDecide(a, core.Actor{ID: "schedule:morning-health"}).Allowed || d.MayDecide(a, core.Actor{ID: "slack:U0BOB"}).Allowed {
		t.Errorf("the schedule or the platform approver may decide a schedule's request")
	}
	// A schedule without approvers falls back to the platform's.
	c.Requester.ID = "schedule:other"
	if v := d.Classify(c); v.Action != core.ActionAsk || len(v.Eligible) != 1 || v.Eligible[0] != "slack:U0BOB" {
		t.Errorf("schedule without approvers: %+v", v)
	}
	// With nobody at all it is denied at once, saying why.
	c.ConvKey = "terminal:x"
	if v := d.Classify(c); v.Action != core.ActionDeny || v.Denial() != "denied by policy: nobody may approve this request (no approvers are configured for it)" {
		t.Errorf("schedule with nobody to approve: %+v", v)
	}
}
