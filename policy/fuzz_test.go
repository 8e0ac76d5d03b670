package policy_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/policy"
)

var fuzzRisks = []core.Risk{core.RiskRead, core.RiskWrite, core.RiskDestructive, "unknown"}

// FuzzPolicyFile feeds arbitrary bytes to the policy parser, then asks
// what an accepted policy decides for an arbitrary call. A rejected file
// is one *policy.Error naming the file. An accepted policy only tightens
// (a call that needs approval is never a read), and every ask can be met:
// a quorum of at least one, at least that many distinct eligible persons,
// the requester among them only with self-approval, and MayDecide agreeing
// with the verdict for the requester and for each eligible person.
func FuzzPolicyFile(f *testing.F) {
	if b, err := os.ReadFile("../configs/policy.example.yaml"); err == nil {
		f.Add(b, "k8s", "deployments_delete", `{"namespace":"prod-eu"}`, uint8(1), "slack:U0ALICE")
	}
	f.Add([]byte(matchSeed), "k8s", "pods_exec", `{"namespace":"prod","cmd":["sh"]}`, uint8(2), "schedule:nightly")
	f.Add([]byte("people:\n  a: {api: a}\nroles:\n  r: [a]\ndefaults: {approvers: [r], self_approval: false}\n"), "x", "y", `{}`, uint8(1), "api:a")
	f.Add([]byte("rules:\n  - name: r\n    match: {tool: \"*secret*\"}\n    action: ask\n"), "vault", "read_secret", `null`, uint8(0), "telegram:1")
	opts := policy.Options{
		PlatformApprovers: map[string][]string{"slack": {"slack:U0BOB"}, "telegram": {"telegram:999"}},
		ScheduleApprovers: map[string][]string{"nightly": {"telegram:999", "slack:U0ALICE"}},
	}
	f.Fuzz(func(t *testing.T, file []byte, server, tool, args string, risk uint8, requester string) {
		p, err := policy.Parse("fuzz.yaml", file, opts)
		if err != nil {
			var pe *policy.Error
			if !errors.As(err, &pe) || pe.File != "fuzz.yaml" {
				t.Fatalf("error %v (%T) is not a *policy.Error naming fuzz.yaml", err, err)
			}
			return
		}
		if !json.Valid([]byte(args)) {
			args = `{}` // the engine validates arguments before asking
		}
		c := core.PolicyCall{Server: server, Tool: tool, Arguments: json.RawMessage(args),
			Risk: fuzzRisks[int(risk)%len(fuzzRisks)], Requester: core.Actor{ID: requester}, ConvKey: "slack:T1:C1:1.1"}
		v := p.Classify(c)
		if again := p.Classify(c); !slices.Equal(again.Eligible, v.Eligible) || again.Action != v.Action {
			t.Fatalf("Classify is not deterministic: %+v then %+v", v, again)
		}
		switch v.Action {
		case core.ActionRead:
			if c.Risk.NeedsApproval() {
				t.Fatalf("a %s call is a read: %+v", c.Risk, v)
			}
			return
		case core.ActionDeny:
			return
		case core.ActionAsk:
		default:
			t.Fatalf("unknown action %q", v.Action)
		}
		requesterPerson := p.Person(requester)
		if v.Quorum < 1 || len(v.Eligible) < v.Quorum {
			t.Fatalf("an ask that cannot be met: quorum %d, eligible %q", v.Quorum, v.Eligible)
		}
		if slices.Contains(v.Eligible, "") || len(slices.Compact(slices.Sorted(slices.Values(v.Eligible)))) != len(v.Eligible) {
			t.Fatalf("eligible %q: want distinct persons", v.Eligible)
		}
		if slices.Contains(v.Eligible, requesterPerson) && (!v.SelfApproval || !core.IsPerson(requester)) {
			t.Fatalf("requester %s (%s) may approve their own call without self-approval: %+v", requester, requesterPerson, v)
		}
		a := core.Approval{ID: "a1", ConvKey: c.ConvKey, Toolset: server, Tool: tool, Arguments: c.Arguments,
			Risk: c.Risk, Requester: c.Requester, Status: core.ApprovalPending, Verdict: v}
		for _, person := range v.Eligible {
			if e := p.MayDecide(a, core.Actor{ID: person}); !e.Allowed && p.Person(person) == person {
				t.Fatalf("eligible %s may not decide: %s", person, e.Reason)
			}
		}
		if e := p.MayDecide(a, c.Requester); e.Allowed != slices.Contains(v.Eligible, requesterPerson) {
			t.Fatalf("MayDecide(requester) = %+v, but eligible %q holds %s: %v", e, v.Eligible, requesterPerson, e.Allowed)
		}
	})
}

const matchSeed = `
people:
  alice: {slack: U0ALICE, telegram: "12345678"}
  bob:   {slack: U0BOB, discord: "1400000000000000001"}
roles:
  sre: [alice, bob]
defaults: {approvers: [sre], quorum: 1}
rules:
  - name: no-exec
    match: {tool: "pods_exec", args: {cmd: ["sh", "bash"]}}
    action: deny
    reason: no shells
  - name: prod
    match: {server: k8s, args: {namespace: "prod*"}, risk: [write, destructive]}
    quorum: 2
    self_approval: false
    notify: ["telegram:12345678"]
redact: {patterns: ['corp-[A-Za-z0-9]{24}'], model_input: false}
limits: {runs_per_person_per_minute: 3}
`
