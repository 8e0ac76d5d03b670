package docstest

import (
	"errors"
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// testCreateAndRead creates a document and reads it back by id and by
// scope and path, every field intact.
func testCreateAndRead(t *testing.T, s docs.Store) {
	d := doc(ws, "payments/rollback.md", "Roll back payments-api with helm rollback.")
	got := save(t, s, d, docs.Save{Note: "created", At: at(0)})
	if got.ID == "" {
		t.Fatal("SaveDocument of a new document: ID is empty")
	}
	want := stored(d, got.ID, 1, at(0), at(0))
	diff(t, "SaveDocument result", want, got)
	if got.SHA256 != docs.Hash(d.Content) {
		t.Errorf("SHA256 = %s, want docs.Hash(content) %s", got.SHA256, docs.Hash(d.Content))
	}
	diff(t, "Document", want, get(t, s, got.ID))
	byPath, err := s.DocumentAt(t.Context(), ws, d.Path)
	if err != nil {
		t.Fatalf("DocumentAt: %v", err)
	}
	diff(t, "DocumentAt", want, byPath)
	diff(t, "History", []docs.Version{{Doc: want, Note: "created", At: at(0)}}, history(t, s, got.ID))
}

// testCreateAtNow: a zero Save.At means now.
func testCreateAtNow(t *testing.T, s docs.Store) {
	before := time.Now()
	got := save(t, s, doc(ws, "a.md", "a"), docs.Save{})
	after := time.Now()
	for what, tm := range map[string]time.Time{"CreatedAt": got.CreatedAt, "UpdatedAt": got.UpdatedAt} {
		if tm.Before(before.Add(-Precision)) || tm.After(after.Add(Precision)) {
			t.Errorf("%s = %v, want between %v and %v (a zero Save.At is now)", what, tm, before, after)
		}
	}
	diff(t, "Document", got, get(t, s, got.ID))
}

// testCreateNewIDs: every new document gets its own id.
func testCreateNewIDs(t *testing.T, s docs.Store) {
	seen := map[string]bool{}
	for _, p := range []string{"a.md", "b.md", "c.md"} {
		d := save(t, s, doc(ws, p, p), docs.Save{At: at(0)})
		if seen[d.ID] {
			t.Errorf("%s got the id %s of another document", p, d.ID)
		}
		seen[d.ID] = true
	}
}

// testUpdateByPath: a save without an id updates the document at its
// scope and path: a new version, the same id and creation time.
func testUpdateByPath(t *testing.T, s docs.Store) {
	d := doc(ops, "deploys.md", "Deploys freeze on Fridays.")
	v1 := save(t, s, d, docs.Save{At: at(0)})
	d.Content = "Deploys freeze on Fridays after 15:00."
	d.Author = "slack:U2"
	v2 := save(t, s, d, docs.Save{Note: "patched", At: at(time.Hour)})
	want := stored(d, v1.ID, 2, at(0), at(time.Hour))
	diff(t, "SaveDocument of a changed document", want, v2)
	if v2.SHA256 == v1.SHA256 {
		t.Errorf("SHA256 did not change with the content")
	}
	diff(t, "Document", want, get(t, s, v1.ID))
	if n := len(history(t, s, v1.ID)); n != 2 {
		t.Errorf("History has %d versions, want 2", n)
	}
}

// testUpdateByID: a save with an id updates that document, whatever else
// changed.
func testUpdateByID(t *testing.T, s docs.Store) {
	v1 := save(t, s, doc(ws, "k8s/oom.md", "OOMKilled pods: raise limits."), docs.Save{At: at(0)})
	d := v1
	d.Title = "OOMKilled pods"
	d.Status = docs.Draft
	d.Trust = docs.AgentDraft
	d.Type = docs.IncidentLesson
	d.Tags = []string{"k8s", "memory"}
	d.Entities = map[string][]string{"workload": {"api"}}
	d.Source = docs.Source{RunID: "r9"}
	v2 := save(t, s, d, docs.Save{At: at(time.Minute)})
	want := stored(d, v1.ID, 2, at(0), at(time.Minute))
	diff(t, "SaveDocument by id", want, v2)
	diff(t, "Document", want, get(t, s, v1.ID))

	// A third save by id, with a stale version and times in the argument:
	// the store sets them.
	d.Content = "OOMKilled pods: raise limits, then find the leak."
	d.Version, d.CreatedAt, d.UpdatedAt, d.SHA256 = 1, at(-time.Hour), at(-time.Hour), "bogus"
	v3 := save(t, s, d, docs.Save{At: at(2 * time.Minute)})
	diff(t, "SaveDocument with stale version and times", stored(d, v1.ID, 3, at(0), at(2*time.Minute)), v3)
}

// testSamePathOtherScope: paths are unique per scope only.
func testSamePathOtherScope(t *testing.T, s docs.Store) {
	a := save(t, s, doc(ws, "notes.md", "workspace notes"), docs.Save{At: at(0)})
	b := save(t, s, doc(ops, "notes.md", "channel notes"), docs.Save{At: at(0)})
	c := save(t, s, doc(opsLong, "notes.md", "other channel notes"), docs.Save{At: at(0)})
	if a.ID == b.ID || b.ID == c.ID || a.Version != 1 || b.Version != 1 || c.Version != 1 {
		t.Fatalf("same path in three scopes: ids %s %s %s, versions %d %d %d; want three new documents",
			a.ID, b.ID, c.ID, a.Version, b.Version, c.Version)
	}
	for _, want := range []docs.Document{a, b, c} {
		got, err := s.DocumentAt(t.Context(), want.Scope, want.Path)
		if err != nil {
			t.Fatalf("DocumentAt(%s): %v", want.Scope, err)
		}
		diff(t, "DocumentAt("+want.Scope.String()+")", want, got)
	}
}

// testSaveSameIsIdempotent: saving what is stored (by path or by id)
// writes nothing, whatever the author, source and time say.
func testSaveSameIsIdempotent(t *testing.T, s docs.Store) {
	d := doc(ws, "runbooks/dns.md", "Check CoreDNS pods first.")
	v1 := save(t, s, d, docs.Save{At: at(0)})

	again := d
	again.Author, again.Source = "cli:bob", docs.Source{File: "elsewhere.md"}
	got := save(t, s, again, docs.Save{Note: "imported", At: at(time.Hour)})
	diff(t, "SaveDocument of the same document by path", v1, got)

	byID := v1
	byID.Author = "slack:U9"
	got = save(t, s, byID, docs.Save{ExpectSHA: v1.SHA256, At: at(2 * time.Hour)})
	diff(t, "SaveDocument of the same document by id", v1, got)

	diff(t, "Document", v1, get(t, s, v1.ID))
	if vs := history(t, s, v1.ID); len(vs) != 1 {
		t.Errorf("History has %d versions after idempotent saves, want 1", len(vs))
	}
}

// testHistory: every created or changed version is appended, oldest
// first, with its note, time and the document as it left it.
func testHistory(t *testing.T, s docs.Store) {
	d := doc(alice, "prefs.md", "Prefers kubectl output as yaml.")
	v1 := save(t, s, d, docs.Save{Note: "created", At: at(0)})
	d.Content = "Prefers kubectl output as json."
	v2 := save(t, s, d, docs.Save{Note: "patched", At: at(time.Minute)})
	save(t, s, d, docs.Save{Note: "not a change", At: at(90 * time.Second)})
	d.Tags = []string{"kubectl"}
	d.Author = "agent"
	v3 := save(t, s, d, docs.Save{At: at(2 * time.Minute)})
	want := []docs.Version{
		{Doc: v1, Note: "created", At: at(0)},
		{Doc: v2, Note: "patched", At: at(time.Minute)},
		{Doc: v3, At: at(2 * time.Minute)},
	}
	diff(t, "History", want, history(t, s, v1.ID))
	if v1.Content == v2.Content || v3.Version != 3 {
		t.Errorf("versions: %d %d %d with contents %q %q, want 1 2 3 with v1's content kept in its snapshot",
			v1.Version, v2.Version, v3.Version, v1.Content, v2.Content)
	}
}

// testExpectSHA: a save expecting the current version's hash succeeds.
func testExpectSHA(t *testing.T, s docs.Store) {
	d := doc(ops, "db.md", "Primary is db-0.")
	v1 := save(t, s, d, docs.Save{At: at(0)})
	d.Content = "Primary is db-1 since the failover."
	v2 := save(t, s, d, docs.Save{ExpectSHA: v1.SHA256, Note: "patched", At: at(time.Minute)})
	diff(t, "SaveDocument with the right ExpectSHA", stored(d, v1.ID, 2, at(0), at(time.Minute)), v2)
	byID := v2
	byID.Content = "Primary is db-2."
	v3 := save(t, s, byID, docs.Save{ExpectSHA: v2.SHA256, At: at(2 * time.Minute)})
	if v3.Version != 3 || v3.SHA256 != docs.Hash(byID.Content) {
		t.Errorf("by id with the right ExpectSHA: version %d sha %s, want 3 and the new content's hash", v3.Version, v3.SHA256)
	}
}

// testExpectSHAConflict: a save expecting another hash fails with a
// *ConflictError carrying the current version and writes nothing, even
// when it would change nothing.
func testExpectSHAConflict(t *testing.T, s docs.Store) {
	d := doc(ops, "db.md", "Primary is db-0.")
	v1 := save(t, s, d, docs.Save{At: at(0)})
	d.Content = "Primary is db-1."
	v2 := save(t, s, d, docs.Save{At: at(time.Minute)})

	stale := d
	stale.Content = "Primary is db-2."
	for name, c := range map[string]docs.Document{"by path": stale, "by id": withID(stale, v1.ID), "unchanged": d} {
		_, err := s.SaveDocument(t.Context(), c, docs.Save{ExpectSHA: v1.SHA256, At: at(time.Hour)})
		if !errors.Is(err, docs.ErrConflict) {
			t.Errorf("%s: SaveDocument with a stale ExpectSHA: err = %v, want ErrConflict", name, err)
			continue
		}
		var ce *docs.ConflictError
		if !errors.As(err, &ce) {
			t.Errorf("%s: err = %T %v, want a *docs.ConflictError", name, err, err)
			continue
		}
		diff(t, name+": ConflictError.Current", v2, ce.Current)
	}
	diff(t, "Document after conflicts", v2, get(t, s, v1.ID))
	if n := len(history(t, s, v1.ID)); n != 2 {
		t.Errorf("History has %d versions after conflicts, want 2", n)
	}
}

func withID(d docs.Document, id string) docs.Document {
	d.ID = id
	return d
}

// testNotFound: reads of what is not there and saves by an unknown id
// fail with ErrNotFound.
func testNotFound(t *testing.T, s docs.Store) {
	ctx := t.Context()
	d := save(t, s, doc(ops, "x.md", "x"), docs.Save{At: at(0)})
	_, err := s.Document(ctx, "no-such-id")
	wantErr(t, "Document(unknown)", err, docs.ErrNotFound)
	_, err = s.DocumentAt(ctx, ops, "y.md")
	wantErr(t, "DocumentAt(unknown path)", err, docs.ErrNotFound)
	_, err = s.DocumentAt(ctx, opsLong, "x.md")
	wantErr(t, "DocumentAt(other channel)", err, docs.ErrNotFound)
	_, err = s.DocumentAt(ctx, docs.Scope{Kind: docs.Channel, Key: "slack:T1:C"}, "x.md")
	wantErr(t, "DocumentAt(channel key prefix)", err, docs.ErrNotFound)
	_, err = s.History(ctx, "no-such-id")
	wantErr(t, "History(unknown)", err, docs.ErrNotFound)
	_, err = s.SaveDocument(ctx, withID(doc(ops, "z.md", "z"), "no-such-id"), docs.Save{At: at(0)})
	wantErr(t, "SaveDocument(unknown id)", err, docs.ErrNotFound)
	if _, err := s.DocumentAt(ctx, ops, "z.md"); !errors.Is(err, docs.ErrNotFound) {
		t.Errorf("a save by an unknown id created a document (DocumentAt err = %v)", err)
	}
	diff(t, "Document", d, get(t, s, d.ID))
}

// testPromotion: a save by id may move a document to another scope and
// path; it keeps its id and history and is found at the new place only.
func testPromotion(t *testing.T, s docs.Store) {
	ctx := t.Context()
	d := doc(conv, "lessons/pgbouncer.md", "Restart pgbouncer after rotating the password.")
	d.Trust, d.Status = docs.AgentDraft, docs.Draft
	v1 := save(t, s, d, docs.Save{Note: "created", At: at(0)})
	p := v1
	p.Scope, p.Path = ws, "runbooks/pgbouncer.md"
	p.Trust, p.Status = docs.AdminApproved, docs.Active
	v2 := save(t, s, p, docs.Save{ExpectSHA: v1.SHA256, Note: "promoted by alice", At: at(time.Hour)})
	want := stored(p, v1.ID, 2, at(0), at(time.Hour))
	diff(t, "SaveDocument moving the document", want, v2)
	got, err := s.DocumentAt(ctx, ws, "runbooks/pgbouncer.md")
	if err != nil {
		t.Fatalf("DocumentAt(new place): %v", err)
	}
	diff(t, "DocumentAt(new place)", want, got)
	_, err = s.DocumentAt(ctx, conv, "lessons/pgbouncer.md")
	wantErr(t, "DocumentAt(old place)", err, docs.ErrNotFound)
	diff(t, "History", []docs.Version{
		{Doc: v1, Note: "created", At: at(0)},
		{Doc: want, Note: "promoted by alice", At: at(time.Hour)},
	}, history(t, s, v1.ID))

	// The old place is free for a new document.
	n := save(t, s, doc(conv, "lessons/pgbouncer.md", "a new note"), docs.Save{At: at(2 * time.Hour)})
	if n.ID == v1.ID || n.Version != 1 {
		t.Errorf("a save at the old place: id %s version %d, want a new document", n.ID, n.Version)
	}
}

// testPromotionPathTaken: moving a document onto another's scope and path
// fails with ErrPathTaken and changes neither.
func testPromotionPathTaken(t *testing.T, s docs.Store) {
	taken := save(t, s, doc(ws, "runbooks/dns.md", "the workspace's"), docs.Save{At: at(0)})
	mine := save(t, s, doc(ops, "dns.md", "the channel's"), docs.Save{At: at(0)})
	m := mine
	m.Scope, m.Path = ws, "runbooks/dns.md"
	_, err := s.SaveDocument(t.Context(), m, docs.Save{Note: "promoted", At: at(time.Hour)})
	wantErr(t, "SaveDocument onto a taken path", err, docs.ErrPathTaken)
	diff(t, "the document at the path", taken, get(t, s, taken.ID))
	diff(t, "the document moved", mine, get(t, s, mine.ID))
	if n := len(history(t, s, mine.ID)); n != 1 {
		t.Errorf("History of the document moved has %d versions, want 1", n)
	}
	// Moving to the same path in another scope, or another path in the
	// same scope, is fine.
	m.Scope, m.Path = opsLong, "dns.md"
	if got := save(t, s, m, docs.Save{At: at(2 * time.Hour)}); got.Version != 2 || got.Scope != opsLong {
		t.Errorf("move to a free place: version %d scope %s, want 2 %s", got.Version, got.Scope, opsLong)
	}
}

// testTagsAndEntities: tags keep their order; entities their kinds and
// values; none round-trips as none.
func testTagsAndEntities(t *testing.T, s docs.Store) {
	tests := []struct {
		name     string
		tags     []string
		entities map[string][]string
	}{
		{"none", nil, nil},
		{"empty", []string{}, map[string][]string{}},
		{"some", []string{"payments", "helm", "rollback"}, map[string][]string{
			"namespace": {"payments"}, "service": {"payments-api", "ledger"}, "incident": {"inc-42"}}},
		{"unsorted", []string{"zeta", "alpha"}, map[string][]string{"environment": {"prod", "eu-west-1"}}},
	}
	for i, tt := range tests {
		d := doc(ws, tt.name+".md", "x")
		d.Tags, d.Entities = tt.tags, tt.entities
		got := save(t, s, d, docs.Save{At: at(time.Duration(i))})
		want := stored(d, got.ID, 1, at(time.Duration(i)), at(time.Duration(i)))
		diff(t, tt.name+": SaveDocument", want, got)
		diff(t, tt.name+": Document", want, get(t, s, got.ID))
		// Saving it again is no change.
		if again := save(t, s, d, docs.Save{At: at(time.Hour)}); again.Version != 1 {
			t.Errorf("%s: saving the same tags and entities again made version %d", tt.name, again.Version)
		}
	}
}
