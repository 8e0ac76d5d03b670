package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
)

// testApprovalPreview: an approval is created with its preview (or none),
// and a preview arriving later replaces it, also after the decision;
// an unknown approval fails the batch with ErrNotFound.
func testApprovalPreview(t *testing.T, s core.Store) {
	ctx := t.Context()
	with := approval(1, "run_p", "conv_p", at(30*60e9))
	with.Preview = &core.Preview{Status: core.PreviewPending}
	without := approval(2, "run_p", "conv_p", at(30*60e9))
	createApprovals(t, s, with, without)
	if got := getApproval(t, s, without.ID).Preview; got != nil {
		t.Errorf("approval created without a preview has %+v", got)
	}
	if got := getApproval(t, s, with.ID).Preview; got == nil || got.Status != core.PreviewPending {
		t.Errorf("approval created with a pending preview has %+v", got)
	}
	ready := core.Preview{Status: core.PreviewReady, Summary: "replicas: 2 → 3", Diff: "-replicas: 2\n+replicas: 3", Hash: "ab12"}
	if err := s.Apply(ctx, core.Batch{Previews: []core.ApprovalPreview{{ApprovalID: with.ID, Preview: ready}}}); err != nil {
		t.Fatalf("Apply(Previews): %v", err)
	}
	if diff := cmp.Diff(&ready, getApproval(t, s, with.ID).Preview); diff != "" {
		t.Errorf("stored preview (-want +got):\n%s", diff)
	}
	if _, err := s.DecideApproval(ctx, with.ID, outcome(core.ApprovalApproved, "bob")); err != nil {
		t.Fatal(err)
	}
	stale := ready
	stale.Stale = "not run: changed since it was approved"
	if err := s.Apply(ctx, core.Batch{Previews: []core.ApprovalPreview{{ApprovalID: with.ID, Preview: stale}}}); err != nil {
		t.Fatalf("Apply(Previews) on a decided approval: %v", err)
	}
	got := getApproval(t, s, with.ID)
	if got.Status != core.ApprovalApproved || got.Preview == nil || got.Preview.Stale != stale.Stale {
		t.Errorf("after marking stale: status %s, preview %+v", got.Status, got.Preview)
	}
	err := s.Apply(ctx, core.Batch{Previews: []core.ApprovalPreview{{ApprovalID: "a11ce-missing", Preview: ready}}})
	if !errors.Is(err, core.ErrNotFound) {
		t.Errorf("preview of a missing approval: %v, want ErrNotFound", err)
	}
}
