package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// approval is a pending request with every field of Approval in use that
// is set on creation. Ids look like the real ones (128 bits, hex).
func approval(n int, runID, conv string, expires time.Time) core.Approval {
	return core.Approval{
		ID:         fmt.Sprintf("a11ce%027x", n),
		RunID:      runID,
		ConvKey:    conv,
		CallID:     fmt.Sprintf("call_%d", n),
		Toolset:    "k8s",
		Tool:       "scale",
		Arguments:  []byte(`{"name":"payments","namespace":"prod","replicas":3}`),
		ActionHash: strings.Repeat("ab", 32),
		Risk:       core.RiskDestructive,
		Requester:  alice,
		Status:     core.ApprovalPending,
		CreatedAt:  at(0),
		ExpiresAt:  expires,
	}
}

func createApprovals(t *testing.T, s core.Store, as ...core.Approval) {
	t.Helper()
	if err := s.Apply(t.Context(), core.Batch{Approvals: as}); err != nil {
		t.Fatalf("CreateApprovals: %v", err)
	}
}

// getApproval calls Approval and fails the test on error.
func getApproval(t *testing.T, s core.Store, id string) core.Approval {
	t.Helper()
	a, err := s.Approval(t.Context(), id)
	if err != nil {
		t.Fatalf("Approval(%q): %v", id, err)
	}
	return a
}

func outcome(status core.ApprovalStatus, by string) core.ApprovalOutcome {
	return core.ApprovalOutcome{
		Status:    status,
		DecidedBy: core.Actor{ID: by, Name: "name of " + by},
		Reason:    "looks right to " + by,
		DecidedAt: at(90 * time.Second),
	}
}

// decided is a with o applied, as DecideApproval must store it.
func decided(a core.Approval, o core.ApprovalOutcome) core.Approval {
	a.Status, a.DecidedBy, a.Reason, a.DecidedAt = o.Status, o.DecidedBy, o.Reason, o.DecidedAt
	return a
}

func testApprovalCreateGet(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(30*time.Minute))
	b := approval(2, "run-1", conv1, at(30*time.Minute))
	b.Risk, b.Tool = core.RiskWrite, "restart"
	b.Arguments = []byte(`{ "name" : "api" }`)
	createApprovals(t, s, a, b)
	diff(t, "Approval(a)", a, getApproval(t, s, a.ID))
	diff(t, "Approval(b)", b, getApproval(t, s, b.ID))
}

func testApprovalNotFound(t *testing.T, s core.Store) {
	if _, err := s.Approval(t.Context(), "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Approval of an unknown id: err = %v, want ErrNotFound", err)
	}
	as, err := s.Approvals(t.Context(), "no-run")
	if err != nil || len(as) != 0 {
		t.Errorf("Approvals of an unknown run = %d, %v; want none, nil", len(as), err)
	}
}

func testApprovalsInCreationOrder(t *testing.T, s core.Store) {
	// Same CreatedAt and ids out of lexical order: creation order is the
	// order of the calls and of the arguments.
	a3 := approval(3, "run-1", conv1, at(time.Hour))
	a1 := approval(1, "run-1", conv1, at(time.Hour))
	a2 := approval(2, "run-1", conv1, at(time.Hour))
	other := approval(4, "run-2", conv1, at(time.Hour))
	createApprovals(t, s, a3, a1)
	createApprovals(t, s, other)
	createApprovals(t, s, a2)
	got, err := s.Approvals(t.Context(), "run-1")
	if err != nil {
		t.Fatalf("Approvals: %v", err)
	}
	diff(t, "Approvals(run-1)", []core.Approval{a3, a1, a2}, got)
}

func testApprovalsDuplicateBatch(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	createApprovals(t, s, a)
	dup := a
	dup.Tool = "delete_namespace"
	fresh := approval(2, "run-1", conv1, at(time.Hour))
	if err := s.Apply(t.Context(), core.Batch{Approvals: []core.Approval{fresh, dup}}); err == nil {
		t.Fatal("CreateApprovals with an existing id: err = nil, want an error")
	}
	diff(t, "Approval after a failed duplicate", a, getApproval(t, s, a.ID))
	if _, err := s.Approval(t.Context(), fresh.ID); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Approval of the rest of a failed batch: err = %v, want ErrNotFound (a batch is stored whole or not at all)", err)
	}
}

func testDecideApproval(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	b := approval(2, "run-1", conv1, at(time.Hour))
	createApprovals(t, s, a, b)
	o := outcome(core.ApprovalApproved, "U2")
	got, err := s.DecideApproval(t.Context(), a.ID, o)
	if err != nil {
		t.Fatalf("DecideApproval: %v", err)
	}
	want := decided(a, o)
	diff(t, "DecideApproval result", want, got)
	diff(t, "Approval after DecideApproval", want, getApproval(t, s, a.ID))
	diff(t, "the other Approval of the run", b, getApproval(t, s, b.ID))

	for i, st := range []core.ApprovalStatus{core.ApprovalDenied, core.ApprovalExpired, core.ApprovalSuperseded, core.ApprovalCancelled} {
		c := approval(10+i, "run-2", conv1, at(time.Hour))
		createApprovals(t, s, c)
		o := core.ApprovalOutcome{Status: st, DecidedAt: at(time.Minute)} // the system decides: no actor, no reason
		got, err := s.DecideApproval(t.Context(), c.ID, o)
		if err != nil {
			t.Fatalf("DecideApproval(%s): %v", st, err)
		}
		diff(t, "DecideApproval("+string(st)+")", decided(c, o), got)
	}
}

func testDecideApprovalFirstWins(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	createApprovals(t, s, a)
	first := outcome(core.ApprovalDenied, "U2")
	if _, err := s.DecideApproval(t.Context(), a.ID, first); err != nil {
		t.Fatalf("DecideApproval: %v", err)
	}
	got, err := s.DecideApproval(t.Context(), a.ID, outcome(core.ApprovalApproved, "U3"))
	if !errors.Is(err, core.ErrAlreadyDecided) {
		t.Fatalf("second DecideApproval: err = %v, want ErrAlreadyDecided", err)
	}
	want := decided(a, first)
	diff(t, "second DecideApproval returns the stored approval", want, got)
	diff(t, "Approval after the second DecideApproval", want, getApproval(t, s, a.ID))
}

func testDecideApprovalConcurrent(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	createApprovals(t, s, a)
	results := make([]core.Approval, racers)
	errs := make([]error, racers)
	concurrently(racers, func(i int) {
		st := core.ApprovalApproved
		if i%2 == 1 {
			st = core.ApprovalDenied
		}
		results[i], errs[i] = s.DecideApproval(t.Context(), a.ID, outcome(st, fmt.Sprintf("U%d", i)))
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("DecideApproval succeeded for deciders %d and %d, want exactly one", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, core.ErrAlreadyDecided):
			t.Fatalf("DecideApproval by decider %d: err = %v, want nil or ErrAlreadyDecided", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no concurrent DecideApproval succeeded, want exactly one")
	}
	stored := getApproval(t, s, a.ID)
	if stored.DecidedBy.ID != fmt.Sprintf("U%d", winner) {
		t.Fatalf("stored approval decided by %q, but decider %d won", stored.DecidedBy.ID, winner)
	}
	for i, r := range results {
		diff(t, fmt.Sprintf("DecideApproval result of decider %d", i), stored, r)
	}
}

func testDecideApprovalNotFound(t *testing.T, s core.Store) {
	_, err := s.DecideApproval(t.Context(), "nope", outcome(core.ApprovalApproved, "U2"))
	if !errors.Is(err, core.ErrNotFound) {
		t.Errorf("DecideApproval of an unknown id: err = %v, want ErrNotFound", err)
	}
}

// testDecideApprovalNotFinal checks that "deciding" to stay pending is
// refused: it would let a second decision through later.
func testDecideApprovalNotFinal(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	createApprovals(t, s, a)
	for _, st := range []core.ApprovalStatus{core.ApprovalPending, ""} {
		if _, err := s.DecideApproval(t.Context(), a.ID, outcome(st, "U2")); err == nil {
			t.Errorf("DecideApproval to status %q: err = nil, want an error", st)
		}
	}
	diff(t, "Approval after refused decisions", a, getApproval(t, s, a.ID))
}

func testExpiredApprovals(t *testing.T, s core.Store) {
	now := at(time.Hour)
	past1 := approval(1, "run-1", conv1, now.Add(-time.Minute))
	future := approval(2, "run-1", conv1, now.Add(time.Minute))
	exact := approval(3, "run-1", conv1, now)
	decidedPast := approval(4, "run-1", conv1, now.Add(-time.Hour))
	past2 := approval(5, "run-2", conv2, now.Add(-time.Millisecond*10))
	createApprovals(t, s, past1, future, exact, decidedPast)
	createApprovals(t, s, past2)
	if _, err := s.DecideApproval(t.Context(), decidedPast.ID, outcome(core.ApprovalApproved, "U2")); err != nil {
		t.Fatal(err)
	}
	got, err := s.ExpiredApprovals(t.Context(), now)
	if err != nil {
		t.Fatalf("ExpiredApprovals: %v", err)
	}
	// The contract gives no order.
	slices.SortFunc(got, func(x, y core.Approval) int { return strings.Compare(x.ID, y.ID) })
	diff(t, "ExpiredApprovals", []core.Approval{past1, past2}, got)

	if got, err := s.ExpiredApprovals(t.Context(), at(-time.Hour)); err != nil || len(got) != 0 {
		t.Errorf("ExpiredApprovals before anything expired = %d, %v; want none, nil", len(got), err)
	}
}

// testPendingSummary checks the count and the oldest creation time of
// pending approvals over every conversation, as decisions take them out.
func testPendingSummary(t *testing.T, s core.Store) {
	// The metrics' question, not the engine's: every store answers it.
	counter, ok := s.(interface {
		PendingSummary(ctx context.Context) (core.PendingSummary, error)
	})
	if !ok {
		t.Fatalf("%T has no PendingSummary, which the metrics need", s)
	}
	summary := func() core.PendingSummary {
		t.Helper()
		got, err := counter.PendingSummary(t.Context())
		if err != nil {
			t.Fatalf("PendingSummary: %v", err)
		}
		return got
	}
	diff(t, "PendingSummary of an empty store", core.PendingSummary{}, summary())

	old := approval(1, "run-1", conv1, at(time.Hour))
	old.CreatedAt = at(-time.Minute)
	mid := approval(2, "run-1", conv1, at(time.Hour))
	young := approval(3, "run-2", conv2, at(time.Hour))
	young.CreatedAt = at(time.Minute)
	// Expired but not yet swept: still pending, and still waiting.
	late := approval(4, "run-3", conv2, at(-time.Hour))
	late.CreatedAt = at(2 * time.Minute)
	createApprovals(t, s, mid, old)
	createApprovals(t, s, young, late)
	diff(t, "PendingSummary of four", core.PendingSummary{Count: 4, Oldest: old.CreatedAt}, summary())

	for _, d := range []struct {
		a  core.Approval
		st core.ApprovalStatus
	}{{old, core.ApprovalApproved}, {late, core.ApprovalExpired}} {
		if _, err := s.DecideApproval(t.Context(), d.a.ID, outcome(d.st, "U2")); err != nil {
			t.Fatal(err)
		}
	}
	diff(t, "PendingSummary after two decisions", core.PendingSummary{Count: 2, Oldest: mid.CreatedAt}, summary())
	for _, a := range []core.Approval{mid, young} {
		if _, err := s.DecideApproval(t.Context(), a.ID, outcome(core.ApprovalDenied, "U2")); err != nil {
			t.Fatal(err)
		}
	}
	diff(t, "PendingSummary after every decision", core.PendingSummary{}, summary())
}
