// Package apistoretest is the conformance suite of what the HTTP API needs
// of a store beyond core.Store (httpapi.Store's listings and
// httpapi.TokenStore). memory/sqlite and memory/postgres run it.
package apistoretest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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
	httpapi.Participation
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
		{"TokenScopesExpiryLastUse", testTokenScopesExpiryLastUse},
		{"Participated", testParticipated},
		{"ConversationRuns", testConversationRuns},
		{"PendingApprovals", testPendingApprovals},
		{"IdempotencyKeyClaim", testIdempotencyKeyClaim},
		{"IdempotencyKeyConcurrentClaims", testIdempotencyKeyConcurrentClaims},
		{"InboundKeepsRunID", testInboundKeepsRunID},
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

func testIdempotencyKeyClaim(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	ttl := 24 * time.Hour
	k := core.IdempotencyKey{ConvKey: "api:a", Key: "k1", BodyHash: []byte("hash-1"), RunID: "run-1", CreatedAt: t0}
	claim := func(k core.IdempotencyKey, now time.Time) (core.IdempotencyKey, bool) {
		t.Helper()
		held, claimed, err := s.ClaimIdempotencyKey(ctx, k, now.Add(-ttl))
		if err != nil {
			t.Fatalf("ClaimIdempotencyKey(%s/%s): %v", k.ConvKey, k.Key, err)
		}
		return held, claimed
	}
	if held, claimed := claim(k, t0); !claimed || held.RunID != "run-1" {
		t.Fatalf("first claim = %+v, %t; want claimed", held, claimed)
	}
	other := k
	other.BodyHash, other.RunID, other.CreatedAt = []byte("hash-2"), "run-2", t0.Add(time.Hour)
	held, claimed := claim(other, other.CreatedAt)
	if claimed || held.RunID != "run-1" || !bytes.Equal(held.BodyHash, []byte("hash-1")) || !held.CreatedAt.Equal(t0) {
		t.Errorf("second claim = %+v, %t; want the first record, not claimed", held, claimed)
	}
	// Per conversation: the same key elsewhere is another key.
	elsewhere := other
	elsewhere.ConvKey = "api:b"
	if _, claimed := claim(elsewhere, other.CreatedAt); !claimed {
		t.Error("the same key in another conversation was not claimed")
	}
	// Releasing with another run leaves it; with its own run frees it.
	if err := s.ReleaseIdempotencyKey(ctx, "api:a", "k1", "run-2"); err != nil {
		t.Fatal(err)
	}
	if _, claimed := claim(other, other.CreatedAt); claimed {
		t.Fatal("a release naming another run freed the key")
	}
	if err := s.ReleaseIdempotencyKey(ctx, "api:a", "k1", "run-1"); err != nil {
		t.Fatal(err)
	}
	if held, claimed := claim(other, other.CreatedAt); !claimed || held.RunID != "run-2" {
		t.Fatalf("after its release, claim = %+v, %t; want claimed", held, claimed)
	}
	if err := s.ReleaseIdempotencyKey(ctx, "api:a", "nope", "run-1"); err != nil {
		t.Errorf("releasing an unknown key: %v", err)
	}
	// A record older than the lifetime is forgotten.
	late := other
	late.RunID, late.CreatedAt = "run-3", other.CreatedAt.Add(ttl+time.Second)
	if held, claimed := claim(late, late.CreatedAt); !claimed || held.RunID != "run-3" {
		t.Errorf("a claim after the lifetime = %+v, %t; want claimed", held, claimed)
	}
}

// Of claims of one key at once, exactly one wins and every other gets
// the winner's record (the race of two identical requests).
func testIdempotencyKeyConcurrentClaims(t *testing.T, s Store) {
	const n = 8
	now := time.Now().UTC()
	var wg sync.WaitGroup
	held := make([]string, n)
	won := make([]bool, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			k := core.IdempotencyKey{ConvKey: "api:race", Key: "same", BodyHash: []byte("h"), RunID: fmt.Sprintf("run-%d", i), CreatedAt: now}
			var h core.IdempotencyKey
			h, won[i], errs[i] = s.ClaimIdempotencyKey(t.Context(), k, now.Add(-time.Hour))
			held[i] = h.RunID
		}()
	}
	close(start)
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		if won[i] {
			winners++
		}
		if held[i] != held[0] {
			t.Errorf("claim %d holds %s, claim 0 %s: one record for all", i, held[i], held[0])
		}
	}
	if winners != 1 {
		t.Errorf("%d claims won, want exactly 1", winners)
	}
}

// The run an inbound message names survives storing, so a replica that
// picks the message up runs it as that run.
func testInboundKeepsRunID(t *testing.T, s Store) {
	ctx := t.Context()
	in := core.Inbound{ConvKey: "api:x", MessageID: "m1", User: core.Actor{ID: "api:alice"}, Text: "hi", Time: time.Now().UTC(), RunID: "run-named"}
	if first, err := s.SaveInbound(ctx, in); err != nil || !first {
		t.Fatalf("SaveInbound = %t, %v", first, err)
	}
	plain := in
	plain.MessageID, plain.RunID = "m2", ""
	if _, err := s.SaveInbound(ctx, plain); err != nil {
		t.Fatal(err)
	}
	got, err := s.PendingInbound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RunID != "run-named" || got[1].RunID != "" {
		t.Errorf("PendingInbound = %+v, want m1 with its run, m2 without", got)
	}
}

func testTokenScopesExpiryLastUse(t *testing.T, s Store) {
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	secret, a, _ := httpapi.NewToken("alice", now)
	a.Scopes, a.ExpiresAt = []string{httpapi.ScopeRead, httpapi.ScopeHook}, now.Add(2*time.Second)
	_, b, _ := httpapi.NewToken("bob", now)
	b.Scopes, b.ExpiresAt = []string{}, time.Time{}
	for _, tok := range []core.APIToken{a, b} {
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TokenByHash(ctx, httpapi.HashToken(secret))
	if err != nil || strings.Join(got.Scopes, ",") != "read,hook" || !got.ExpiresAt.Equal(a.ExpiresAt) || !got.LastUsedAt.IsZero() {
		t.Fatalf("TokenByHash = %+v, %v; want scopes read,hook, expiry %s, never used", got, err, a.ExpiresAt)
	}
	if got.Expired(now.Add(time.Second)) || !got.Expired(now.Add(2*time.Second)) {
		t.Errorf("Expired: want false before %s, true from it", a.ExpiresAt)
	}
	used := now.Add(time.Minute)
	if err := s.TouchToken(ctx, a.ID, used); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchToken(ctx, a.ID, now); err != nil { // an older use does not go back
		t.Fatal(err)
	}
	if err := s.TouchToken(ctx, "tok_nope", now); err != nil {
		t.Errorf("TouchToken(unknown) = %v, want nil", err)
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("Tokens = %+v, %v", list, err)
	}
	for _, tok := range list {
		switch tok.Person {
		case "alice":
			if !tok.LastUsedAt.Equal(used) {
				t.Errorf("alice's last use = %s, want %s", tok.LastUsedAt, used)
			}
		case "bob":
			if len(tok.Scopes) != 0 || !tok.ExpiresAt.IsZero() || tok.Expired(now.Add(1000*time.Hour)) {
				t.Errorf("bob's token = %+v, want no scopes, never expiring", tok)
			}
		}
	}
}

func testParticipated(t *testing.T, s Store) {
	ctx := t.Context()
	now := time.Now().UTC()
	// alice sends a message in c-msg; a run of hers is in c-run; she votes
	// on an approval in c-vote; she is eligible to decide one in c-elig;
	// bob alone is in c-bob.
	for _, in := range []core.Inbound{
		{ConvKey: "c-msg", MessageID: "m1", User: core.Actor{ID: "slack:U0ALICE"}, Text: "hi", Time: now},
		{ConvKey: "c-bob", MessageID: "m2", User: core.Actor{ID: "api:bob"}, Text: "hi", Time: now},
	} {
		if _, err := s.SaveInbound(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	run := core.Run{ID: "r1", ConvKey: "c-run", Requester: core.Actor{ID: "api:alice"}, Status: core.RunDone, StartedAt: now}
	mk := func(id, conv string, eligible ...string) core.Approval {
		return core.Approval{ID: id, RunID: "r1", ConvKey: conv, CallID: "call-" + id, Toolset: "k8s", Tool: "scale",
			Arguments: []byte(`{}`), ActionHash: strings.Repeat("ab", 32), Risk: core.RiskWrite, Status: core.ApprovalPending,
			CreatedAt: now, ExpiresAt: now.Add(time.Hour), Verdict: core.Verdict{Action: core.ActionAsk, Eligible: eligible, Quorum: 1}}
	}
	if err := s.Apply(ctx, core.Batch{CreateRun: &run, Approvals: []core.Approval{mk("a1", "c-vote", "carol"), mk("a2", "c-elig", "carol", "alice"), mk("a3", "c-bob", "bob")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddVote(ctx, "a1", core.Vote{Person: "alice", Actor: core.Actor{ID: "telegram:1"}, Approve: true, At: now}); err != nil {
		t.Fatal(err)
	}
	keys, err := s.Participated(ctx, []string{"api:alice", "slack:U0ALICE"}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if want := []string{"c-elig", "c-msg", "c-run", "c-vote"}; !slices.Equal(keys, want) {
		t.Errorf("Participated(alice) = %v, want %v", keys, want)
	}
	if keys, err := s.Participated(ctx, []string{"api:dave"}, "dave"); err != nil || len(keys) != 0 {
		t.Errorf("Participated(dave) = %v, %v; want none", keys, err)
	}
}
