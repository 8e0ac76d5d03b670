// Package docstest is the conformance suite every [docs.Store] must pass:
// memory/sqlite runs it on a temporary file, memory/postgres on a
// throw-away database. A store is done when [Run] passes.
//
// The suite talks to a store only through docs.Store, so what it demands is
// what retrieval and the memory tools may rely on, whatever the database:
//
//   - Times are kept to the millisecond or better and compared as instants.
//     Nil and empty tags and entities are not told apart.
//   - Documents lists in byte order of scope kind, scope key and path
//     (Postgres: COLLATE "C"), which is the byte order of Scope.String
//     and path.
//   - Search relevance is only compared within one search: a document
//     matching more, rarer query terms ranks above one matching a single
//     common term, whatever the store's ranking function. Both stores stem
//     English (FTS5 porter, Postgres 'english') and split words at
//     anything but letters and digits, so an entity value "payments-api"
//     is found by "payments" and by "api".
//   - Every "exactly one wins" promise (ExpectSHA) is checked with
//     concurrent callers.
//
// Subtests run in parallel, each on its own fresh store.
package docstest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/opsgate/opsgate/memory/docs"
)

// Precision is how exactly a store must keep times.
const Precision = time.Millisecond

// Run runs the conformance suite against fresh stores made by open (one per
// subtest). open must return an empty store and arrange for it to be closed
// when t ends (t.Cleanup); it may call t.Fatal when the store cannot be made.
func Run(t *testing.T, open func(t *testing.T) docs.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s docs.Store)
	}{
		{"CreateAndRead", testCreateAndRead},
		{"CreateAtNow", testCreateAtNow},
		{"CreateNewIDs", testCreateNewIDs},
		{"UpdateByPath", testUpdateByPath},
		{"UpdateByID", testUpdateByID},
		{"SamePathOtherScope", testSamePathOtherScope},
		{"SaveSameIsIdempotent", testSaveSameIsIdempotent},
		{"History", testHistory},
		{"ExpectSHA", testExpectSHA},
		{"ExpectSHAConflict", testExpectSHAConflict},
		{"NotFound", testNotFound},
		{"Promotion", testPromotion},
		{"PromotionPathTaken", testPromotionPathTaken},
		{"TagsAndEntities", testTagsAndEntities},
		{"DocumentsFilter", testDocumentsFilter},
		{"SearchAnyTerm", testSearchAnyTerm},
		{"SearchScopes", testSearchScopes},
		{"SearchStatuses", testSearchStatuses},
		{"SearchLimit", testSearchLimit},
		{"SearchRanking", testSearchRanking},
		{"SearchFields", testSearchFields},
		{"SearchStemming", testSearchStemming},
		{"SearchFollowsUpdates", testSearchFollowsUpdates},
		{"SearchEmptyAndGarbage", testSearchEmptyAndGarbage},
		{"Usages", testUsages},
		{"ConcurrentCreates", testConcurrentCreates},
		{"ConcurrentExpectSHA", testConcurrentExpectSHA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

// cmpOpts compare values as a store must keep them (see the package doc).
var cmpOpts = cmp.Options{
	cmpopts.EquateApproxTime(Precision),
	cmpopts.EquateEmpty(),
}

// diff reports a mismatch between want and got.
func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpOpts); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// t0 has sub-millisecond digits, so a store that keeps only seconds fails,
// and a zone other than UTC, so a store must keep the instant, not the
// wall clock.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589_793_238, time.FixedZone("CET", 3600))

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

var (
	alice   = docs.Scope{Kind: docs.User, Key: "alice"}
	bob     = docs.Scope{Kind: docs.User, Key: "bob"}
	ops     = docs.Scope{Kind: docs.Channel, Key: "slack:T1:C1"}
	opsLong = docs.Scope{Kind: docs.Channel, Key: "slack:T1:C12"}
	conv    = docs.Scope{Kind: docs.Conversation, Key: "slack:T1:C1:1700000000.000100"}
	ws      = docs.WorkspaceScope
)

// doc is a full document at scope and path with content; every field a
// save keeps is set, so that round trips check them all.
func doc(scope docs.Scope, path, content string) docs.Document {
	return docs.Document{
		Scope:    scope,
		Path:     path,
		Title:    "Title of " + path,
		Content:  content,
		Type:     docs.Runbook,
		Tags:     []string{"oncall"},
		Entities: map[string][]string{"namespace": {"default"}},
		Status:   docs.Active,
		Trust:    docs.AdminApproved,
		Source:   docs.Source{ConvKey: "slack:T1:C1:1.2", RunID: "r1", CallID: "call_1", File: path},
		Author:   "cli:alice",
	}
}

// save saves d with opt and fails the test on error.
func save(t *testing.T, s docs.Store, d docs.Document, opt docs.Save) docs.Document {
	t.Helper()
	got, err := s.SaveDocument(t.Context(), d, opt)
	if err != nil {
		t.Fatalf("SaveDocument(%s %s): %v", d.Scope, d.Path, err)
	}
	return got
}

// get reads document id and fails the test on error.
func get(t *testing.T, s docs.Store, id string) docs.Document {
	t.Helper()
	d, err := s.Document(t.Context(), id)
	if err != nil {
		t.Fatalf("Document(%s): %v", id, err)
	}
	return d
}

// history reads the history of id and fails the test on error.
func history(t *testing.T, s docs.Store, id string) []docs.Version {
	t.Helper()
	vs, err := s.History(t.Context(), id)
	if err != nil {
		t.Fatalf("History(%s): %v", id, err)
	}
	return vs
}

// stored is d as a store returns it after saving it at time when, as
// version v with id.
func stored(d docs.Document, id string, v int, created, updated time.Time) docs.Document {
	d.ID, d.Version, d.SHA256 = id, v, docs.Hash(d.Content)
	d.CreatedAt, d.UpdatedAt = created, updated
	return d
}

// wantErr checks that err is target (errors.Is).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want %v", what, err, target)
	}
}

// concurrently runs fn(i) for i in [0, n) from n goroutines released
// together, to make racing callers as likely as possible.
func concurrently(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// paths returns the scope and path of each document, for readable diffs.
func paths(ds []docs.Document) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%s %s", d.Scope, d.Path)
	}
	return out
}
