package timeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

var t0 = time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// drill is what the store holds after an alert, its triage, a person's
// question, an approved write and the resolve.
func drill() Records {
	triage := core.Actor{ID: "alertmanager:ops", Name: "Alertmanager ops"}
	alice := core.Actor{ID: "slack:U0ALICE", Name: "alice"}
	bob := core.Actor{ID: "slack:U0BOB", Name: "bob"}
	runs := []core.Run{
		{ID: "r1", Requester: triage, Status: core.RunDone, StartedAt: at(2), EndedAt: at(5)},
		{ID: "r2", Requester: alice, Status: core.RunDone, StartedAt: at(60), EndedAt: at(130)},
	}
	msgs := []core.Message{
		{Role: core.RoleUser, Content: "Triage this alert: HighErrorRate\nseverity=critical", RunID: "r1", Time: at(2)},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "get_pods"}}, RunID: "r1", Time: at(3)},
		{Role: core.RoleTool, Content: "web-1 CrashLoopBackOff", RunID: "r1", Time: at(4)},
		{Role: core.RoleAssistant, Content: "web-1 is crash looping.\nI would scale web to 3.", RunID: "r1", Time: at(5)},
		{Role: core.RoleUser, Content: "scale web to 3 | now", RunID: "r2", Time: at(60)},
		{Role: core.RoleUser, Content: "and check the rollout", Name: "carol", RunID: "r2", Time: at(70)},
		{Role: core.RoleAssistant, Content: "Web runs 3 replicas now.", RunID: "r2", Time: at(130)},
	}
	audit := []core.AuditEntry{
		{Time: at(4), Kind: core.AuditExecuted, RunID: "r1", Actor: triage, Toolset: "k8s", Tool: "get_pods", Risk: core.RiskRead, Duration: 400 * time.Millisecond},
		{Time: at(62), Kind: core.AuditProposed, RunID: "r2", ApprovalID: "a1", Actor: alice, Toolset: "k8s", Tool: "scale_deployment", Risk: core.RiskWrite},
		{Time: at(120), Kind: core.AuditApproved, RunID: "r2", ApprovalID: "a1", Actor: bob, Toolset: "k8s", Tool: "scale_deployment", Risk: core.RiskWrite},
		{Time: at(121), Kind: core.AuditExecuted, RunID: "r2", ApprovalID: "a1", Actor: bob, Toolset: "k8s", Tool: "scale_deployment", Risk: core.RiskWrite, Duration: time.Second},
	}
	alerts := []AlertChange{
		{Name: "HighErrorRate", Severity: "critical", Summary: "5xx above 5%", Receiver: "ops", At: at(-30), Received: at(1)},
		{Resolved: true, Name: "HighErrorRate", Severity: "critical", Summary: "5xx above 5%", Receiver: "ops", At: at(300), Received: at(301)},
	}
	return Records{Messages: msgs, Runs: runs, Audit: audit, Alerts: alerts}
}

func drillTimeline(title string) Timeline {
	return FromRecords("incident:abc", title, drill())
}

func TestTimelineOfADrillInOrder(t *testing.T) {
	tl := drillTimeline("")
	var got []string
	for _, s := range tl.Steps {
		got = append(got, s.Time.Format("15:04:05")+" "+string(s.Kind)+" "+s.Actor)
	}
	want := []string{
		"02:59:30 alert.fired Alertmanager ops",
		"03:00:02 message Alertmanager ops",
		"03:00:03 tool.call Alertmanager ops", // started 0.4 s before it returned at :04
		"03:00:05 answer opsgate",
		"03:01:00 message alice",
		"03:01:02 approval.asked alice",
		"03:01:10 message carol",
		"03:02:00 approval.decided bob",
		"03:02:00 tool.call bob",
		"03:02:10 answer opsgate",
		"03:05:00 alert.resolved Alertmanager ops",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := tl.Steps[0]; !s.Alert.ReceivedAt.Equal(at(1)) || !s.Alert.StartsAt.Equal(at(-30)) {
		t.Errorf("the alert step keeps when it started and when it was received: %+v", s.Alert)
	}
	if strings.Join(tl.People, ",") != "alice,carol,bob" {
		t.Errorf("people = %q, want alice, carol, bob (not the alert intake)", tl.People)
	}
	if len(tl.Changes) != 1 || tl.Changes[0].Tool != "k8s/scale_deployment" || strings.Join(tl.Changes[0].ApprovedBy, ",") != "bob" {
		t.Errorf("changes = %+v, want the approved scale by bob", tl.Changes)
	}
	if tl.Approvals != (Approvals{Asked: 1, Approved: 1}) {
		t.Errorf("approvals = %+v", tl.Approvals)
	}
	if tl.Duration() != 330*time.Second {
		t.Errorf("duration = %s, want 5m30s (from the alert's start to its end)", tl.Duration())
	}
}

func TestTimelineMarkdownAndShort(t *testing.T) {
	tl := drillTimeline("web is down")
	md := tl.Markdown()
	for _, want := range []string{
		"# Incident report: web is down",
		"- Start: 2026-11-28 02:59:30Z · End: 2026-11-28 03:05:00Z · Duration: 5m30s",
		"- People: alice, carol, bob",
		"- Changes made: k8s/scale_deployment (ok, approved by bob)",
		"- Approvals: 1 asked, 1 approved, 0 denied, 0 other",
		"| 2026-11-28 03:01:00Z | alice | 💬 scale web to 3 \\| now |",
		"| 2026-11-28 03:02:00Z | bob | 👍 approved k8s/scale_deployment by bob |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	short := tl.Short()
	if strings.Contains(short, "🤖") || !strings.Contains(short, "`03:02:00` 🔧 bob: k8s/scale_deployment (write) ok in 1s") {
		t.Errorf("the short timeline leaves out answers and keeps the change:\n%s", short)
	}
}

func TestShortCutsLongTimelines(t *testing.T) {
	var msgs []core.Message
	runs := []core.Run{{ID: "r", Requester: core.Actor{ID: "u", Name: "alice"}}}
	for i := range 50 {
		msgs = append(msgs, core.Message{Role: core.RoleUser, Content: "message " + string(rune('a'+i%26)), RunID: "r", Time: at(i)})
	}
	short := FromRecords("slack:T:C:1", "", Records{Messages: msgs, Runs: runs}).Short()
	if n := strings.Count(short, "💬"); n != shortMax {
		t.Errorf("%d steps shown, want %d:\n%s", n, shortMax, short)
	}
	if !strings.Contains(short, "… 30 more steps: `opsgate incident report slack:T:C:1`") {
		t.Errorf("the cut is not said:\n%s", short)
	}
}

func TestFirstLine(t *testing.T) {
	long := strings.Repeat("é", 200)
	for in, want := range map[string]string{
		"":                     "",
		"\n\n  second line \n": "second line",
		long:                   strings.Repeat("é", 119) + "…",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStopsErrorsAndDenials(t *testing.T) {
	alice := core.Actor{ID: "slack:U1", Name: "alice"}
	runs := []core.Run{
		{ID: "r1", Requester: alice, Status: core.RunStopped, StartedAt: at(0), EndedAt: at(5)},
		{ID: "r2", Requester: alice, Status: core.RunError, Error: "model unreachable\nat 10.0.0.1", StartedAt: at(10), EndedAt: at(11)},
	}
	audit := []core.AuditEntry{
		{Time: at(1), Kind: core.AuditProposed, RunID: "r1", ApprovalID: "a", Actor: alice, Tool: "delete_pod", Risk: core.RiskDestructive},
		{Time: at(2), Kind: core.AuditVote, RunID: "r1", ApprovalID: "a", Actor: core.Actor{ID: "slack:U2", Name: "bob"}, Tool: "delete_pod"},
		{Time: at(5), Kind: core.AuditCancelled, RunID: "r1", ApprovalID: "a", Actor: core.SystemActor, Tool: "delete_pod", Detail: "opsgate is shutting down"},
		{Time: at(6), Kind: core.AuditRefused, RunID: "r1", ApprovalID: "a", Actor: core.Actor{ID: "slack:U3", Name: "mallory"}, Tool: "delete_pod", Detail: "not an approver"},
	}
	tl := FromRecords("k", "", Records{Runs: runs, Audit: audit})
	var got []string
	for _, s := range tl.Steps {
		got = append(got, string(s.Kind)+": "+s.Text)
	}
	want := "approval.asked: asked to approve delete_pod (destructive)\napproval.voted: voted to approve delete_pod\n" +
		"approval.decided: cancelled delete_pod: opsgate is shutting down\nstop: run stopped by opsgate\nrefused: refused delete_pod: not an approver\nerror: run failed: model unreachable"
	if strings.Join(got, "\n") != want {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if tl.Approvals != (Approvals{Asked: 1, Other: 1}) {
		t.Errorf("approvals = %+v", tl.Approvals)
	}
	if strings.Join(tl.People, ",") != "bob,mallory" {
		t.Errorf("people = %q: the voter, and the one refused (they acted)", tl.People)
	}
}

// records is a Source over records held in memory.
type records struct {
	msgs      []core.Message
	runs      []core.Run
	audit     []core.AuditEntry
	changes   []AlertChange
	approvals map[string]core.Approval
}

func (r records) Messages(context.Context, string) ([]core.Message, error) { return r.msgs, nil }
func (r records) ConversationRuns(context.Context, string) ([]core.Run, error) {
	return r.runs, nil
}
func (r records) Audit(context.Context, core.AuditFilter) ([]core.AuditEntry, error) {
	return r.audit, nil
}
func (r records) Approval(_ context.Context, id string) (core.Approval, error) {
	a, ok := r.approvals[id]
	if !ok {
		return a, core.ErrNotFound
	}
	return a, nil
}

func (r records) AlertChanges(context.Context, string) ([]AlertChange, error) {
	return r.changes, nil
}

// The alerts come from the source's optional Alerts, in order with the
// rest; a resolve is at its endsAt.
func TestBuildTakesAlertsFromTheIntake(t *testing.T) {
	r := drill()
	src := records{msgs: r.Messages, runs: r.Runs, audit: r.Audit, changes: []AlertChange{
		{Name: "HighErrorRate", Severity: "critical", Receiver: "ops", At: at(-30), Received: at(1)},
		{Name: "HighLatency", Receiver: "ops", At: at(50), Received: at(51)},
		{Resolved: true, Name: "HighErrorRate", Severity: "critical", Receiver: "ops", At: at(300), Received: at(301)},
	}}
	tl, err := Build(context.Background(), src, "incident:abc", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range tl.Steps {
		if s.Alert != nil {
			got = append(got, s.Time.Format("15:04:05")+" "+s.Text+" received "+s.Alert.ReceivedAt.Format("15:04:05"))
		}
	}
	want := "02:59:30 fired: HighErrorRate (critical) received 03:00:01\n03:00:50 fired: HighLatency received 03:00:51\n" +
		"03:05:00 resolved: HighErrorRate (critical) received 03:05:01"
	if strings.Join(got, "\n") != want {
		t.Errorf("alert steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// A request says whom it asked, from its approval's verdict.
func TestBuildSaysWhomARequestAsked(t *testing.T) {
	r := drill()
	tl, err := Build(context.Background(), records{msgs: r.Messages, runs: r.Runs, audit: r.Audit, changes: r.Alerts,
		approvals: map[string]core.Approval{"a1": {ID: "a1", Verdict: core.Verdict{Approvers: []string{"sre", "bob"}}}}}, "incident:abc", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tl.Steps {
		if s.Kind == ApprovalAsked {
			if s.Text != "asked sre, bob to approve k8s/scale_deployment (write)" {
				t.Errorf("the request: %q", s.Text)
			}
			return
		}
	}
	t.Error("no approval asked")
}

// PreviewOf reads the preview from an approval's JSON form: none on an
// approval without one.
func TestPreviewOfAnApprovalWithout(t *testing.T) {
	if p, ok := PreviewOf(core.Approval{ID: "a"}); ok || p != "" {
		t.Errorf("PreviewOf = %q, %v; want none", p, ok)
	}
}
