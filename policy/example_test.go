package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/opsgate/opsgate/core"
)

// TestExamplePolicy loads configs/policy.example.yaml, the docs/design.md §11
// example, and checks it says what its comments say.
func TestExamplePolicy(t *testing.T) {
	p := mustLoad(t, "../configs/policy.example.yaml", Options{})
	if n, r, k := p.Counts(); n != 3 || r != 2 || k != 3 {
		t.Errorf("counts: %d people, %d roles, %d rules", n, r, k)
	}
	if v := p.Classify(call("k8s", "pods_delete", core.RiskDestructive, "slack:U0ALICE", `{"namespace":"prod"}`)); v.Action != core.ActionDeny || v.Rule != "no-prod-deletes" {
		t.Errorf("prod delete: %+v", v)
	}
	v := p.Classify(call("k8s", "deployments_scale", core.RiskWrite, "slack:U0BOB", `{"namespace":"prod-eu"}`))
	if v.Action != core.ActionAsk || v.Rule != "prod-changes-need-two" || v.Quorum != 2 || v.SelfApproval ||
		len(v.Eligible) != 2 || len(v.Notify) != 1 || v.Notify[0] != "telegram:12345678" {
		t.Errorf("prod change: %+v", v)
	}
	if v := p.Classify(call("k8s", "secrets_get", core.RiskRead, "slack:U0BOB", `{}`)); v.Action != core.ActionAsk {
		t.Errorf("secret read: %+v", v)
	}
	if !p.InRole("telegram:12345678", "admin") || p.InRole("slack:U0BOB", "admin") {
		t.Errorf("admin role")
	}
	r := p.Redact()
	if !r.ModelInput || len(r.Patterns) != 1 || !r.Patterns[0].MatchString("corp-abcdefghijklmnopqrstuvwx") {
		t.Errorf("redact: %+v", r)
	}
	if p.RunsPerPersonPerMinute() != 10 {
		t.Errorf("limit %d", p.RunsPerPersonPerMinute())
	}
}

// TestNoFileIsDefaultPolicy: without a policy file the package gives
// exactly core.DefaultPolicy's answers.
func TestNoFileIsDefaultPolicy(t *testing.T) {
	opts := Options{
		PlatformApprovers: map[string][]string{"slack": {"slack:U0BOB"}, "telegram": {"telegram:2"}},
		ScheduleApprovers: map[string][]string{"nightly": {"telegram:2"}},
	}
	p := mustLoad(t, "", opts)
	d := core.DefaultPolicy{Approvers: opts.PlatformApprovers, Schedules: opts.ScheduleApprovers}
	whos := []string{"", "slack:U0ALICE", "slack:U0BOB", "telegram:2", "telegram:1", "schedule:nightly"}
	for _, as := range []string{"slack:U0ALICE", "telegram:1", "terminal:alice", "schedule:nightly", "schedule:x", ""} {
		for _, risk := range []core.Risk{core.RiskRead, core.RiskWrite, core.RiskDestructive} {
			c := call("k8s", "pods_delete", risk, as, `{}`)
			got, want := p.Classify(c), d.Classify(c)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Classify(%s, %s) differs from DefaultPolicy (-want +got):\n%s", as, risk, diff)
			}
			if want.Action != core.ActionAsk {
				continue
			}
			a := proposed(d, c)
			for _, who := range whos {
				if g, w := p.MayDecide(a, core.Actor{ID: who}), d.MayDecide(a, core.Actor{ID: who}); g != w {
					t.Errorf("MayDecide(%s asked, %s decides) = %+v, DefaultPolicy %+v", as, who, g, w)
				}
			}
		}
	}
}
