package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opsgate/opsgate/core"
)

const matchPolicy = `
people:
  alice: {slack: U0ALICE, telegram: "12345678"}
  bob:   {slack: U0BOB}
  carol: {slack: U0CAROL, discord: "1400000000000000001"}
  dave:  {telegram: 55555}
roles:
  sre: [alice, bob, carol]
  dev: [dave]
defaults:
  approvers: [sre]
rules:
  - name: never-drop-databases
    match: {tool: "drop_*"}
    action: deny
    reason: Databases are dropped by hand.
  - name: no-prod-deletes
    match: {server: k8s, tool: "*_delete", args: {namespace: "prod*"}}
    action: deny
    reason: Deleting in production is done by people, not by the bot.
  - name: prod-paths
    match: {args: {path: "*prod*"}}
    action: ask
    approvers: [alice]
  - name: eu-clusters
    match: {args: {cluster: "re:^eu-(west|north)-[0-9]+$"}}
    action: ask
    approvers: [bob]
  - name: labelled
    match: {args: {metadata.labels.team: payments, app.kubernetes.io/name: "api*"}}
    action: ask
    approvers: [carol]
  - name: any-container-latest
    match: {args: {containers.image: "*:latest"}}
    action: deny
    reason: Pin your images.
  - name: prod-changes-need-two
    match: {server: k8s, args: {namespace: "prod*"}, risk: [write, destructive]}
    action: ask
    quorum: 2
    self_approval: false
    notify: ["telegram:12345678", bob]
  - name: devs-scaling
    match: {tool: "*_scale", who: [dev]}
    action: ask
    approvers: [dev, "slack:U0BOB"]
  - name: scaling
    match: {tool: "*_scale"}
    action: ask
    approvers: [carol]
  - name: replicas-zero
    match: {args: {replicas: 0, dry_run: false}}
    action: ask
    approvers: [bob]
  - name: secrets-are-sensitive
    match: {tool: "*secret*"}
    action: ask
`

func mustParse(t testing.TB, src string, opts Options) *Policy {
	t.Helper()
	p, err := Parse("test.yaml", []byte(src), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func call(server, tool string, risk core.Risk, as, args string) core.PolicyCall {
	platform, _, _ := strings.Cut(as, ":")
	return core.PolicyCall{Server: server, Tool: tool, Risk: risk, Requester: core.Actor{ID: as},
		Arguments: json.RawMessage(args), ConvKey: platform + ":T1:C1"}
}

// TestClassify is the matching table: globs across "/", re:, dotted
// argument paths, risk, who, the first match winning, a read made to ask,
// a deny for anything, and no non-read ever becoming a read.
func TestClassify(t *testing.T) {
	p := mustParse(t, matchPolicy, Options{})
	type want struct {
		action   core.Action
		rule     string
		eligible []string
		quorum   int
		self     bool
		notify   []string
	}
	ask := func(rule string, q int, self bool, eligible ...string) want {
		return want{action: core.ActionAsk, rule: rule, eligible: eligible, quorum: q, self: self}
	}
	for _, tc := range []struct {
		name string
		c    core.PolicyCall
		want want
	}{
		{"read, no rule: runs", call("k8s", "pods_list", core.RiskRead, "slack:U0BOB", `{"namespace":"dev"}`),
			want{action: core.ActionRead}},
		{"write, no rule: defaults", call("k8s", "pods_exec", core.RiskWrite, "slack:U0BOB", `{"namespace":"dev"}`),
			ask("", 1, true, "alice", "bob", "carol")},
		{"unknown risk asks like a write", call("k8s", "pods_exec", core.Risk("odd"), "slack:U0BOB", `{}`),
			ask("", 1, true, "alice", "bob", "carol")},
		{"deny beats a read", call("db", "drop_table", core.RiskRead, "slack:U0ALICE", `{}`),
			want{action: core.ActionDeny, rule: "never-drop-databases"}},
		{"deny with glob and arg", call("k8s", "pods_delete", core.RiskDestructive, "slack:U0ALICE", `{"namespace":"prod-eu"}`),
			want{action: core.ActionDeny, rule: "no-prod-deletes"}},
		{"deny needs every field", call("helm", "pods_delete", core.RiskDestructive, "slack:U0ALICE", `{"namespace":"prod-eu"}`),
			ask("", 1, true, "alice", "bob", "carol")},
		{"glob star crosses slash", call("files", "write_file", core.RiskWrite, "slack:U0BOB", `{"path":"/srv/prod/app.yaml"}`),
			ask("prod-paths", 1, true, "alice")},
		{"read with an ask rule asks", call("files", "read_file", core.RiskRead, "slack:U0BOB", `{"path":"/srv/prod/app.yaml"}`),
			ask("prod-paths", 1, true, "alice")},
		{"re: matches", call("k8s", "nodes_drain", core.RiskWrite, "slack:U0ALICE", `{"cluster":"eu-west-1"}`),
			ask("eu-clusters", 1, true, "bob")},
		{"re: does not match", call("k8s", "nodes_drain", core.RiskWrite, "slack:U0ALICE", `{"cluster":"eu-south-1"}`),
			ask("", 1, true, "alice", "bob", "carol")},
		{"dotted path and a key with dots", call("k8s", "apply", core.RiskWrite, "slack:U0ALICE",
			`{"metadata":{"labels":{"team":"payments"}},"app.kubernetes.io/name":"api-gw"}`),
			ask("labelled", 1, true, "carol")},
		{"dotted path: every arg must match", call("k8s", "apply", core.RiskWrite, "slack:U0ALICE",
			`{"metadata":{"labels":{"team":"search"}},"app.kubernetes.io/name":"api-gw"}`),
			ask("", 1, true, "alice", "bob", "carol")},
		{"array: any element", call("k8s", "deploy", core.RiskWrite, "slack:U0ALICE",
			`{"containers":[{"image":"nginx:1.27"},{"image":"busybox:latest"}]}`),
			want{action: core.ActionDeny, rule: "any-container-latest"}},
		{"array: none matches", call("k8s", "deploy", core.RiskWrite, "slack:U0ALICE",
			`{"containers":[{"image":"nginx:1.27"}]}`),
			ask("", 1, true, "alice", "bob", "carol")},
		{"risk matches, self-approval off", call("k8s", "deployments_patch", core.RiskWrite, "slack:U0ALICE", `{"namespace":"prod"}`),
			want{action: core.ActionAsk, rule: "prod-changes-need-two", eligible: []string{"bob", "carol"}, quorum: 2,
				notify: []string{"telegram:12345678", "slack:U0BOB"}}},
		{"risk does not match a read", call("k8s", "pods_list", core.RiskRead, "slack:U0ALICE", `{"namespace":"prod"}`),
			want{action: core.ActionRead}},
		{"who matches a role", call("k8s", "deployments_scale", core.RiskWrite, "telegram:55555", `{}`),
			ask("devs-scaling", 1, true, "dave", "bob")},
		{"first match wins over a later rule", call("k8s", "deployments_scale", core.RiskWrite, "slack:U0BOB", `{}`),
			ask("scaling", 1, true, "carol")},
		{"numbers and booleans as text", call("k8s", "scale_to", core.RiskWrite, "slack:U0ALICE", `{"replicas":0,"dry_run":false}`),
			ask("replicas-zero", 1, true, "bob")},
		{"a read tool made to ask, defaults", call("k8s", "secrets_get", core.RiskRead, "slack:U0BOB", `{}`),
			ask("secrets-are-sensitive", 1, true, "alice", "bob", "carol")},
		{"arguments that are not JSON meet arg rules", call("k8s", "pods_delete", core.RiskWrite, "slack:U0BOB", `{"namespace":`),
			want{action: core.ActionDeny, rule: "no-prod-deletes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			v := p.Classify(c)
			got := want{action: v.Action, rule: v.Rule, eligible: v.Eligible, quorum: v.Quorum, self: v.SelfApproval, notify: v.Notify}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if c.Risk.NeedsApproval() && v.Action == core.ActionRead {
				t.Errorf("a %s call became a read", c.Risk)
			}
		})
	}
}
