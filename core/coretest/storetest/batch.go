package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// fullBatch is a batch with every part in use, as a run's first step and
// its pause would write them (which the engine never does at once).
func fullBatch() core.Batch {
	conv := core.Conversation{Key: conv1, Title: "payments 502s", Toolsets: []core.Toolset{{Name: "k8s", Write: true}}, CreatedAt: at(0)}
	run := newRun("run-1", conv1)
	ended := run
	ended.Status, ended.Iterations, ended.EndedAt = core.RunDone, 2, at(time.Minute)
	ended.Usage = core.Usage{PromptTokens: 1200, CompletionTokens: 80, TotalTokens: 1280}
	trail := auditTrail()
	return core.Batch{
		Conversation: &conv,
		CreateRun:    &run,
		ConvKey:      conv1,
		Messages:     transcript(),
		InboundDone:  []core.Inbound{inbound(conv1, "m1")},
		Approvals:    []core.Approval{approval(1, "run-1", conv1, at(time.Hour)), approval(2, "run-1", conv1, at(time.Hour))},
		Checkpoint:   new(checkpoint("run-1", conv1, at(time.Minute))),
		Audit:        trail[:3],
		UpdateRun:    &ended,
	}
}

func testApply(t *testing.T, s core.Store) {
	ctx := t.Context()
	saveInbound(t, s, inbound(conv1, "m1"))
	saveInbound(t, s, inbound(conv1, "m2"))
	before, err := s.Conversation(ctx, conv1)
	if err != nil {
		t.Fatal(err)
	}
	b := fullBatch()
	if err := s.Apply(ctx, b); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got, err := s.Conversation(ctx, conv1)
	if err != nil {
		t.Fatal(err)
	}
	want := *b.Conversation
	want.CreatedAt = before.CreatedAt // UpdateConversation keeps it
	if !got.UpdatedAt.After(before.UpdatedAt) {
		t.Errorf("UpdatedAt after a batch with messages = %v, want after %v", got.UpdatedAt, before.UpdatedAt)
	}
	want.UpdatedAt = got.UpdatedAt // the store's; see testConversationsByActivity
	diff(t, "Conversation", want, got)
	// CreateRun, then UpdateRun of the same run: the update wins.
	diff(t, "Run", *b.UpdateRun, getRun(t, s, "run-1"))
	diff(t, "Messages", b.Messages, messages(t, s, conv1))
	pending, err := s.PendingInbound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "PendingInbound", []core.Inbound{inbound(conv1, "m2")}, pending)
	as, err := s.Approvals(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "Approvals", b.Approvals, as)
	diff(t, "Checkpoint", *b.Checkpoint, getCheckpoint(t, s, "run-1"))
	diff(t, "Audit", b.Audit, checkIDs(t, audit(t, s, core.AuditFilter{})))

	// Later batches append after what is there.
	more := []core.Message{{Role: core.RoleUser, Content: "and now?", RunID: "run-2", Time: at(time.Hour)}}
	if err := s.Apply(ctx, core.Batch{ConvKey: conv1, Messages: more, Audit: auditTrail()[3:4]}); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	diff(t, "Messages after a second batch", append(b.Messages, more...), messages(t, s, conv1))
	diff(t, "Audit after a second batch", auditTrail()[:4], checkIDs(t, audit(t, s, core.AuditFilter{})))
}

// A batch whose last part fails leaves no trace of its other parts.
func testApplyAllOrNothing(t *testing.T, s core.Store) {
	ctx := t.Context()
	saveInbound(t, s, inbound(conv1, "m1"))
	old := []core.Message{{Role: core.RoleUser, Content: "before", Time: at(0)}}
	if err := s.Apply(ctx, core.Batch{ConvKey: conv1, Messages: old}); err != nil {
		t.Fatal(err)
	}
	b := fullBatch()
	b.CreateRun = nil // so the UpdateRun of run-1 finds no run
	err := s.Apply(ctx, b)
	if !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("Apply with an UpdateRun of a missing run: err = %v, want ErrNotFound", err)
	}
	got, err := s.Conversation(ctx, conv1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "" || len(got.Toolsets) != 0 {
		t.Errorf("Conversation after a failed batch = %+v, want it untouched", got)
	}
	diff(t, "Messages after a failed batch", old, messages(t, s, conv1))
	pending, err := s.PendingInbound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "PendingInbound after a failed batch", []core.Inbound{inbound(conv1, "m1")}, pending)
	if as, err := s.Approvals(ctx, "run-1"); err != nil || len(as) != 0 {
		t.Errorf("Approvals after a failed batch = %v, %v; want none", as, err)
	}
	if _, err := s.Checkpoint(ctx, "run-1"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Checkpoint after a failed batch: err = %v, want ErrNotFound", err)
	}
	if es := audit(t, s, core.AuditFilter{}); len(es) != 0 {
		t.Errorf("Audit after a failed batch has %d entries, want none", len(es))
	}

	// A part failing first (an existing run id) fails the batch too.
	if err := s.Apply(ctx, core.Batch{CreateRun: ptr(newRun("run-2", conv1))}); err != nil {
		t.Fatal(err)
	}
	dup := newRun("run-2", conv1)
	if err := s.Apply(ctx, core.Batch{CreateRun: &dup, ConvKey: conv1, Messages: transcript()}); err == nil {
		t.Error("Apply with a CreateRun of an existing id: err = nil, want an error")
	}
	diff(t, "Messages after a failed CreateRun", old, messages(t, s, conv1))
}

func testApplyEmpty(t *testing.T, s core.Store) {
	if err := s.Apply(t.Context(), core.Batch{}); err != nil {
		t.Errorf("Apply of an empty batch: %v", err)
	}
	if es := audit(t, s, core.AuditFilter{}); len(es) != 0 {
		t.Errorf("Audit after an empty batch has %d entries, want none", len(es))
	}
}

// Batches from concurrent callers each land whole: no batch's messages
// are interleaved with another's.
func testApplyConcurrent(t *testing.T, s core.Store) {
	const n = 8
	concurrently(n, func(i int) {
		msgs := transcript()[1:4]
		for k := range msgs {
			msgs[k].RunID = string(rune('a' + i))
		}
		if err := s.Apply(t.Context(), core.Batch{ConvKey: conv1, Messages: msgs}); err != nil {
			t.Errorf("Apply %d: %v", i, err)
		}
	})
	got := messages(t, s, conv1)
	if len(got) != 3*n {
		t.Fatalf("got %d messages, want %d", len(got), 3*n)
	}
	for i := 0; i < len(got); i += 3 {
		if got[i].RunID != got[i+1].RunID || got[i].RunID != got[i+2].RunID {
			t.Errorf("messages %d..%d come from different batches: %q %q %q", i, i+2, got[i].RunID, got[i+1].RunID, got[i+2].RunID)
		}
	}
}
