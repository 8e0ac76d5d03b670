package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// auditTrail is what one approval leaves in the audit log, plus entries of
// another run and another conversation. Some entries say where their risk
// came from, the older kind of entry does not; both must read back as
// written and chain.
func auditTrail() []core.AuditEntry {
	hash := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	return []core.AuditEntry{
		{Time: at(0), Kind: core.AuditProposed, ConvKey: conv1, RunID: "run-1", ApprovalID: "appr-1", Actor: alice, Toolset: "k8s", Tool: "scale", ActionHash: hash, Risk: core.RiskWrite, Detail: `{"replicas":3}`},
		{Time: at(time.Second), Kind: core.AuditExecuted, ConvKey: conv1, RunID: "run-1", Toolset: "k8s", Tool: "get_pods", Risk: core.RiskRead, RiskSource: core.RiskFromAnnotation, Duration: 412 * time.Millisecond},
		{Time: at(2 * time.Second), Kind: core.AuditRefused, ConvKey: conv1, RunID: "run-1", ApprovalID: "appr-1", Actor: core.Actor{ID: "U666"}, ActionHash: hash, Detail: "not an approver"},
		{Time: at(3 * time.Second), Kind: core.AuditApproved, ConvKey: conv1, RunID: "run-1", ApprovalID: "appr-1", Actor: core.Actor{ID: "U2", Name: "bob"}, ActionHash: hash},
		{Time: at(4 * time.Second), Kind: core.AuditExecuted, ConvKey: conv1, RunID: "run-2", Toolset: "k8s", Tool: "get_events", Risk: core.RiskRead, Duration: time.Nanosecond},
		{Time: at(5 * time.Second), Kind: core.AuditFailed, ConvKey: conv2, RunID: "run-3", ApprovalID: "appr-2", Toolset: "argo", Tool: "sync", Risk: core.RiskDestructive, RiskSource: core.RiskConfigured, Duration: 3*time.Second + 7, Detail: "MCP server \"argo\" is unavailable: EOF"},
		{Time: at(6 * time.Second), Kind: core.AuditExecuted, ConvKey: conv1, RunID: "run-1", ApprovalID: "appr-1", Actor: core.Actor{ID: "U2", Name: "bob"}, Toolset: "k8s", Tool: "scale", ActionHash: hash, Risk: core.RiskWrite, Duration: 2 * time.Second},
	}
}

// appendAudit appends es in order and fails the test on error.
func appendAudit(t *testing.T, s core.Store, es ...core.AuditEntry) {
	t.Helper()
	for _, e := range es {
		if err := s.Apply(t.Context(), core.Batch{Audit: []core.AuditEntry{e}}); err != nil {
			t.Fatalf("AppendAudit(%s): %v", e.Kind, err)
		}
	}
}

// audit calls Audit and fails the test on error.
func audit(t *testing.T, s core.Store, f core.AuditFilter) []core.AuditEntry {
	t.Helper()
	es, err := s.Audit(t.Context(), f)
	if err != nil {
		t.Fatalf("Audit(%+v): %v", f, err)
	}
	return es
}

// checkIDs checks that the store assigned increasing ids and returns the
// entries with ID cleared, to compare with what was appended.
func checkIDs(t *testing.T, es []core.AuditEntry) []core.AuditEntry {
	t.Helper()
	out := slices.Clone(es)
	var last int64
	for i := range out {
		if out[i].ID <= last {
			t.Errorf("entry %d has id %d after id %d, want ids > 0 and increasing", i, out[i].ID, last)
		}
		last = out[i].ID
		if out[i].Hash == "" {
			t.Errorf("entry %d has no hash: the store must chain every entry", out[i].ID)
		}
		out[i].ID, out[i].PrevHash, out[i].Hash = 0, "", ""
	}
	return out
}

func testAuditAppendAssignsIDs(t *testing.T, s core.Store) {
	if es := audit(t, s, core.AuditFilter{}); len(es) != 0 {
		t.Fatalf("Audit of a new store = %d entries, want none", len(es))
	}
	trail := auditTrail()
	// A caller's ID is ignored: the store assigns ids.
	for i := range trail {
		trail[i].ID = 1
	}
	appendAudit(t, s, trail...)
	for i := range trail {
		trail[i].ID = 0
	}
	diff(t, "Audit", trail, checkIDs(t, audit(t, s, core.AuditFilter{})))
}

func testAuditFilter(t *testing.T, s core.Store) {
	trail := auditTrail()
	appendAudit(t, s, trail...)
	pick := func(idx ...int) []core.AuditEntry {
		var es []core.AuditEntry
		for _, i := range idx {
			es = append(es, trail[i])
		}
		return es
	}
	tests := []struct {
		name string
		f    core.AuditFilter
		want []core.AuditEntry
	}{
		{"conversation", core.AuditFilter{ConvKey: conv1}, pick(0, 1, 2, 3, 4, 6)},
		{"other conversation", core.AuditFilter{ConvKey: conv2}, pick(5)},
		{"run", core.AuditFilter{RunID: "run-1"}, pick(0, 1, 2, 3, 6)},
		{"approval", core.AuditFilter{ApprovalID: "appr-1"}, pick(0, 2, 3, 6)},
		{"conversation and run", core.AuditFilter{ConvKey: conv1, RunID: "run-2"}, pick(4)},
		{"all three", core.AuditFilter{ConvKey: conv2, RunID: "run-3", ApprovalID: "appr-2"}, pick(5)},
		{"no match", core.AuditFilter{ConvKey: conv2, RunID: "run-1"}, nil},
		{"unknown", core.AuditFilter{ApprovalID: "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff(t, fmt.Sprintf("Audit(%+v)", tt.f), tt.want, checkIDs(t, audit(t, s, tt.f)))
		})
	}
}

// testAuditUnchanged checks what the interface can show of append-only:
// what was read once reads the same later, whatever the reader did with its
// copy and whatever was appended since.
func testAuditUnchanged(t *testing.T, s core.Store) {
	trail := auditTrail()
	appendAudit(t, s, trail[:3]...)
	before := audit(t, s, core.AuditFilter{})
	want := slices.Clone(before)
	before[0].Kind, before[1].Detail, before[2].ID = core.AuditApproved, "tampered", 999
	appendAudit(t, s, trail[3:]...)
	after := audit(t, s, core.AuditFilter{})
	if len(after) != len(trail) {
		t.Fatalf("Audit = %d entries, want %d", len(after), len(trail))
	}
	diff(t, "the first entries read again", want, after[:len(want)])
}

func testAuditConcurrentAppends(t *testing.T, s core.Store) {
	const each = 5
	concurrently(racers, func(i int) {
		for j := range each {
			e := core.AuditEntry{Time: at(time.Duration(j)), Kind: core.AuditExecuted, ConvKey: conv1, RunID: fmt.Sprintf("run-%d", i), Detail: fmt.Sprint(j)}
			if err := s.Apply(t.Context(), core.Batch{Audit: []core.AuditEntry{e}}); err != nil {
				t.Errorf("AppendAudit: %v", err)
			}
		}
	})
	es := audit(t, s, core.AuditFilter{ConvKey: conv1})
	if len(es) != racers*each {
		t.Fatalf("Audit after %d concurrent appenders = %d entries, want %d", racers, len(es), racers*each)
	}
	checkIDs(t, es)
	// The chain holds: no two appenders shared a predecessor.
	all := audit(t, s, core.AuditFilter{})
	if n, brk := core.VerifyChain(all); brk != nil || n != len(all) {
		t.Errorf("VerifyChain after concurrent appends = %d verified, break %+v; want all %d", n, brk, len(all))
	}
	// Each appender's entries are in the order it appended them.
	for i := range racers {
		run := fmt.Sprintf("run-%d", i)
		var got []string
		for _, e := range audit(t, s, core.AuditFilter{RunID: run}) {
			got = append(got, e.Detail)
		}
		diff(t, "details of "+run, []string{"0", "1", "2", "3", "4"}, got)
	}
}

// testAuditChain: every entry carries the hash of the one before it and its
// own, as core.AuditEntry.ChainHash computes them, through AppendAudit and
// Apply alike.
func testAuditChain(t *testing.T, s core.Store) {
	trail := auditTrail()
	appendAudit(t, s, trail[:2]...)
	if err := s.Apply(t.Context(), core.Batch{Audit: trail[2:]}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	es := audit(t, s, core.AuditFilter{})
	prev := ""
	for _, e := range es {
		if e.PrevHash != prev || e.Hash != e.ChainHash(prev) {
			t.Fatalf("entry %d: prev %q hash %q; want prev %q and hash %q", e.ID, e.PrevHash, e.Hash, prev, e.ChainHash(prev))
		}
		prev = e.Hash
	}
	if n, brk := core.VerifyChain(es); brk != nil || n != len(trail) {
		t.Errorf("VerifyChain = %d, %+v; want %d entries verified", n, brk, len(trail))
	}
}
