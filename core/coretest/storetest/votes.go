package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// vote is person's vote, cast through identity.
func vote(person, identity string, approve bool, after time.Duration) core.Vote {
	return core.Vote{Person: person, Actor: core.Actor{ID: identity, Name: "@" + person},
		Approve: approve, Reason: "checked by " + person, At: at(after)}
}

// testVotesRoundTrip: an approval keeps its verdict, and its votes in the
// order they were cast, on every read.
func testVotesRoundTrip(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	a.Verdict = core.Verdict{Action: core.ActionAsk, Rule: "prod-changes-need-two", Reason: "two people for prod",
		Approvers: []string{"sre"}, Eligible: []string{"alice", "bob", "carol"}, Quorum: 2, Notify: []string{"telegram:12345678"}}
	createApprovals(t, s, a)
	diff(t, "Approval with a verdict", a, getApproval(t, s, a.ID))

	v1, v2 := vote("bob", "slack:U0BOB", true, time.Minute), vote("carol", "telegram:7", true, 2*time.Minute)
	got, err := s.AddVote(t.Context(), a.ID, v1)
	if err != nil {
		t.Fatalf("AddVote: %v", err)
	}
	a.Votes = []core.Vote{v1}
	diff(t, "AddVote result", a, got)
	if got, err = s.AddVote(t.Context(), a.ID, v2); err != nil {
		t.Fatalf("AddVote: %v", err)
	}
	a.Votes = []core.Vote{v1, v2}
	diff(t, "AddVote result after two votes", a, got)
	diff(t, "Approval", a, getApproval(t, s, a.ID))
	list, err := s.Approvals(t.Context(), "run-1")
	if err != nil {
		t.Fatalf("Approvals: %v", err)
	}
	diff(t, "Approvals", []core.Approval{a}, list)
	o := outcome(core.ApprovalApproved, "telegram:7")
	decidedA, err := s.DecideApproval(t.Context(), a.ID, o)
	if err != nil {
		t.Fatalf("DecideApproval: %v", err)
	}
	diff(t, "DecideApproval result keeps the votes", decided(a, o), decidedA)
}

// testVoteOncePerPerson: a person's second vote, through any identity and
// either way, is refused and changes nothing.
func testVoteOncePerPerson(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	createApprovals(t, s, a)
	first := vote("bob", "slack:U0BOB", true, time.Minute)
	if _, err := s.AddVote(t.Context(), a.ID, first); err != nil {
		t.Fatalf("AddVote: %v", err)
	}
	a.Votes = []core.Vote{first}
	for _, again := range []core.Vote{vote("bob", "slack:U0BOB", true, 2*time.Minute), vote("bob", "telegram:87654321", false, 3*time.Minute)} {
		got, err := s.AddVote(t.Context(), a.ID, again)
		if !errors.Is(err, core.ErrAlreadyVoted) {
			t.Fatalf("second vote of bob via %s: err = %v, want ErrAlreadyVoted", again.Actor.ID, err)
		}
		diff(t, "approval returned with ErrAlreadyVoted", a, got)
	}
	diff(t, "Approval after refused votes", a, getApproval(t, s, a.ID))
}

// testVoteOnDecided: a decided approval takes no votes; an unknown one is
// not found.
func testVoteOnDecided(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	createApprovals(t, s, a)
	o := outcome(core.ApprovalDenied, "U9")
	if _, err := s.DecideApproval(t.Context(), a.ID, o); err != nil {
		t.Fatalf("DecideApproval: %v", err)
	}
	got, err := s.AddVote(t.Context(), a.ID, vote("bob", "slack:U0BOB", true, time.Minute))
	if !errors.Is(err, core.ErrAlreadyDecided) {
		t.Fatalf("AddVote on a denied approval: err = %v, want ErrAlreadyDecided", err)
	}
	diff(t, "approval returned with ErrAlreadyDecided", decided(a, o), got)
	if _, err := s.AddVote(t.Context(), "nope", vote("bob", "slack:U0BOB", true, time.Minute)); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("AddVote on an unknown approval: err = %v, want ErrNotFound", err)
	}
}

// testVotesConcurrent: racing votes of distinct people all count; racing
// votes of one person count once.
func testVotesConcurrent(t *testing.T, s core.Store) {
	a := approval(1, "run-1", conv1, at(time.Hour))
	b := approval(2, "run-1", conv1, at(time.Hour))
	createApprovals(t, s, a, b)
	errs := make([]error, racers)
	concurrently(racers, func(i int) {
		_, errs[i] = s.AddVote(t.Context(), a.ID, vote(fmt.Sprintf("p%d", i), fmt.Sprintf("slack:U%d", i), true, time.Minute))
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("vote of person %d: %v", i, err)
		}
	}
	if n := len(getApproval(t, s, a.ID).Votes); n != racers {
		t.Errorf("%d distinct people voted, %d votes stored", racers, n)
	}
	ok := make([]bool, racers)
	concurrently(racers, func(i int) {
		_, err := s.AddVote(t.Context(), b.ID, vote("bob", fmt.Sprintf("slack:U%d", i), true, time.Minute))
		ok[i] = err == nil
		if err != nil && !errors.Is(err, core.ErrAlreadyVoted) {
			t.Errorf("racing vote %d of bob: %v", i, err)
		}
	})
	counted := 0
	for _, o := range ok {
		if o {
			counted++
		}
	}
	if got := getApproval(t, s, b.ID).Votes; counted != 1 || len(got) != 1 {
		t.Errorf("bob voted %d times at once: %d accepted, %d stored; want 1 and 1", racers, counted, len(got))
	}
}
