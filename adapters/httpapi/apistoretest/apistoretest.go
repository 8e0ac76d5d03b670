// Package apistoretest is the conformance suite of what the HTTP API needs
// of a store beyond core.Store (httpapi.Store's listings and
// httpapi.TokenStore). memory/sqlite and memory/postgres run it.
package apistoretest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
)

// Store is a store the suite can set up and check.
type Store interface {
	core.Store
	httpapi.Store
	httpapi.TokenStore
}

// Run runs the suite against fresh stores made by open (one per subtest);
// open arranges for the store to be closed when t ends.
func Run(t *testing.T, open func(t *testing.T) Store) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"TokenCreateFindRevoke", testTokenCreateFindRevoke},
		{"TokenDuplicateHash", testTokenDuplicateHash},
		{"TokenRevokeUnknown", testTokenRevokeUnknown},
		{"ConversationRuns", testConversationRuns},
		{"PendingApprovals", testPendingApprovals},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func testTokenCreateFindRevoke(t *testing.T, s Store) {
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	secretA, a, err := httpapi.NewToken("alice", now)
	if err != nil {
		t.Fatal(err)
	}
	_, b, _ := httpapi.NewToken("bob", now.Add(time.Second))
	for _, tok := range []core.APIToken{a, b} {
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatalf("CreateToken(%s): %v", tok.ID, err)
		}
	}
	got, err := s.TokenByHash(ctx, httpapi.HashToken(secretA))
	if err != nil || got.ID != a.ID || got.Person != "alice" || !bytes.Equal(got.Hash, a.Hash) || !got.CreatedAt.Equal(now) || !got.RevokedAt.IsZero() {
		t.Fatalf("TokenByHash = %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.TokenByHash(ctx, httpapi.HashToken(secretA+"x")); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("TokenByHash(unknown) err = %v, want ErrNotFound", err)
	}
	revoked := now.Add(time.Minute)
	if err := s.RevokeToken(ctx, a.ID, revoked); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, a.ID, revoked.Add(time.Hour)); err != nil {
		t.Fatalf("revoking again: %v", err)
	}
	got, err = s.TokenByHash(ctx, a.Hash)
	if err != nil || !got.RevokedAt.Equal(revoked) {
		t.Errorf("after revoking: %+v, %v; want revoked at %s (the first revocation)", got, err, revoked)
	}
	list, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tok := range list {
		ids = append(ids, fmt.Sprintf("%s:%s:%t", tok.ID, tok.Person, tok.RevokedAt.IsZero()))
	}
	want := []string{a.ID + ":alice:false", b.ID + ":bob:true"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("Tokens = %v, want %v (oldest first)", ids, want)
	}
}

func testTokenDuplicateHash(t *testing.T, s Store) {
	_, a, _ := httpapi.NewToken("alice", time.Now())
	if err := s.CreateToken(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	dup := a
	dup.ID = "tok_other"
	if err := s.CreateToken(t.Context(), dup); err == nil {
		t.Error("a second token with the same hash was stored")
	}
}

func testTokenRevokeUnknown(t *testing.T, s Store) {
	if err := s.RevokeToken(t.Context(), "tok_nope", time.Now()); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("RevokeToken(unknown) = %v, want ErrNotFound", err)
	}
}

func testConversationRuns(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	for i, r := range []core.Run{
		{ID: "r1", ConvKey: "c1", Status: core.RunDone, StartedAt: t0},
		{ID: "r2", ConvKey: "c2", Status: core.RunRunning, StartedAt: t0.Add(time.Second)},
		{ID: "r3", ConvKey: "c1", Status: core.RunRunning, StartedAt: t0.Add(2 * time.Second)},
	} {
		if err := s.Apply(ctx, core.Batch{CreateRun: &r}); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	rs, err := s.ConversationRuns(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].ID != "r1" || rs[1].ID != "r3" || rs[1].Status != core.RunRunning {
		t.Errorf("ConversationRuns(c1) = %+v, want r1 then r3", rs)
	}
	if rs, err := s.ConversationRuns(ctx, "nope"); err != nil || len(rs) != 0 {
		t.Errorf("ConversationRuns(unknown) = %v, %v; want none", rs, err)
	}
}

func testPendingApprovals(t *testing.T, s Store) {
	ctx := t.Context()
	now := time.Now().UTC()
	mk := func(id, run, conv string) core.Approval {
		return core.Approval{ID: id, RunID: run, ConvKey: conv, CallID: "call-" + id, Toolset: "k8s", Tool: "scale",
			Arguments: []byte(`{}`), ActionHash: strings.Repeat("ab", 32), Risk: core.RiskWrite, Status: core.ApprovalPending,
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	if err := s.Apply(ctx, core.Batch{Approvals: []core.Approval{mk("a1", "r1", "slack:c"), mk("a2", "r2", "telegram:c"), mk("a3", "r3", "discord:c")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DecideApproval(ctx, "a2", core.ApprovalOutcome{Status: core.ApprovalDenied, DecidedAt: now}); err != nil {
		t.Fatal(err)
	}
	as, err := s.PendingApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].ID != "a1" || as[1].ID != "a3" {
		t.Errorf("PendingApprovals = %+v, want a1 then a3", as)
	}
}
