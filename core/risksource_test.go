package core_test

import (
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// An entry that does not say where its risk came from hashes exactly as
// entries did before RiskSource existed, so audit logs written then still
// verify. The hash was computed before the field was added.
func TestChainHashOfAnEntryWithoutRiskSourceIsUnchanged(t *testing.T) {
	e := core.AuditEntry{Time: time.UnixMicro(1764300000123456), Kind: core.AuditExecuted, ConvKey: "slack:T1:C1", RunID: "run-1",
		ApprovalID: "appr-1", Actor: core.Actor{ID: "slack:U1", Name: "alice"}, Toolset: "argocd", Tool: "sync_application",
		ActionHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Risk: core.RiskWrite, Duration: 1500 * time.Millisecond, Detail: "ok"}
	const before = "821d8a7d0d0aaadde27befbfc8f2918b7232cb3670e8730243e4c16d5df7bdb4"
	if got := e.ChainHash("prev"); got != before {
		t.Fatalf("ChainHash = %s, want %s as before risk sources: old audit logs would no longer verify", got, before)
	}
	for _, src := range []core.RiskSource{core.RiskFromAnnotation, core.RiskConfigured, core.RiskFromDefault} {
		with := e
		with.RiskSource = src
		if with.ChainHash("prev") == before {
			t.Errorf("RiskSource %q is not part of the hash: it could be changed without breaking the chain", src)
		}
	}
}

// A chain mixing entries from before and after risk sources verifies, and
// changing an entry's source afterwards breaks it.
func TestVerifyChainWithRiskSources(t *testing.T) {
	es := chain(1, 4)
	es[2].RiskSource, es[4].RiskSource = core.RiskConfigured, core.RiskFromAnnotation
	prev := es[0].PrevHash
	for i := 1; i < len(es); i++ {
		es[i].PrevHash, es[i].Hash = prev, es[i].ChainHash(prev)
		prev = es[i].Hash
	}
	if n, brk := core.VerifyChain(es); brk != nil || n != 4 {
		t.Fatalf("VerifyChain = %d, %+v; want 4 verified", n, brk)
	}
	es[2].RiskSource = core.RiskFromAnnotation
	if _, brk := core.VerifyChain(es); brk == nil || brk.ID != 3 {
		t.Errorf("a changed risk source: break = %+v, want entry 3", brk)
	}
}

func TestStoredRisk(t *testing.T) {
	for _, tt := range []struct {
		e      core.AuditEntry
		stored string
	}{
		{core.AuditEntry{Risk: core.RiskRead, RiskSource: core.RiskConfigured}, "read/configured"},
		{core.AuditEntry{Risk: core.RiskDestructive, RiskSource: core.RiskFromAnnotation}, "destructive/annotation"},
		{core.AuditEntry{Risk: core.RiskWrite}, "write"}, // as written before sources
		{core.AuditEntry{}, ""}, // an approval's decision has no risk
	} {
		if got := tt.e.StoredRisk(); got != tt.stored {
			t.Errorf("StoredRisk(%s, %s) = %q, want %q", tt.e.Risk, tt.e.RiskSource, got, tt.stored)
		}
		var back core.AuditEntry
		back.SetStoredRisk(tt.stored)
		if back.Risk != tt.e.Risk || back.RiskSource != tt.e.RiskSource {
			t.Errorf("SetStoredRisk(%q) = %s, %s; want %s, %s", tt.stored, back.Risk, back.RiskSource, tt.e.Risk, tt.e.RiskSource)
		}
	}
}
