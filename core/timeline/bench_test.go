package timeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// BenchmarkFromRecords derives the timeline of a long incident: 500 runs,
// each a person's message, a read, a request, its approval, the write and
// an answer (3,000 steps), as /timeline and the API do on every request.
func BenchmarkFromRecords(b *testing.B) {
	var (
		msgs  []core.Message
		runs  []core.Run
		audit []core.AuditEntry
	)
	alice := core.Actor{ID: "slack:U1", Name: "alice"}
	bob := core.Actor{ID: "slack:U2", Name: "bob"}
	for i := range 500 {
		id, ap := fmt.Sprintf("r%d", i), fmt.Sprintf("a%d", i)
		t := t0.Add(time.Duration(i) * time.Minute)
		runs = append(runs, core.Run{ID: id, Requester: alice, Status: core.RunDone, StartedAt: t, EndedAt: t.Add(50 * time.Second)})
		msgs = append(msgs, core.Message{Role: core.RoleUser, Content: "scale web to 3, then check the rollout of the payments api", RunID: id, Time: t},
			core.Message{Role: core.RoleAssistant, Content: "Web runs 3 replicas now.\nThe rollout is done.", RunID: id, Time: t.Add(50 * time.Second)})
		audit = append(audit,
			core.AuditEntry{Time: t.Add(time.Second), Kind: core.AuditExecuted, RunID: id, Actor: alice, Toolset: "k8s", Tool: "get_pods", Risk: core.RiskRead, Duration: time.Second},
			core.AuditEntry{Time: t.Add(2 * time.Second), Kind: core.AuditProposed, RunID: id, ApprovalID: ap, Actor: alice, Toolset: "k8s", Tool: "scale_deployment", Risk: core.RiskWrite},
			core.AuditEntry{Time: t.Add(40 * time.Second), Kind: core.AuditApproved, RunID: id, ApprovalID: ap, Actor: bob, Toolset: "k8s", Tool: "scale_deployment", Risk: core.RiskWrite},
			core.AuditEntry{Time: t.Add(41 * time.Second), Kind: core.AuditExecuted, RunID: id, ApprovalID: ap, Actor: bob, Toolset: "k8s", Tool: "scale_deployment", Risk: core.RiskWrite, Duration: time.Second})
	}
	b.ReportAllocs()
	for b.Loop() {
		tl := FromRecords("incident:abc", "", Records{Messages: msgs, Runs: runs, Audit: audit})
		if len(tl.Steps) != 3000 {
			b.Fatalf("%d steps", len(tl.Steps))
		}
	}
}
