package docstest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// search runs q, fails the test on error, checks what every result must
// be (Text > 0, best first, at most the limit) and returns the matches.
func search(t *testing.T, s docs.Store, q docs.Query) []docs.Match {
	t.Helper()
	ms, err := s.SearchDocuments(t.Context(), q)
	if err != nil {
		t.Fatalf("SearchDocuments(%q): %v", q.Terms, err)
	}
	limit := q.Limit
	if limit == 0 {
		limit = 20
	}
	if len(ms) > limit {
		t.Errorf("SearchDocuments(%q, limit %d) returned %d matches", q.Terms, q.Limit, len(ms))
	}
	for i, m := range ms {
		if !(m.Text > 0) {
			t.Errorf("SearchDocuments(%q): match %d (%s) has Text %v, want > 0", q.Terms, i, m.Doc.Path, m.Text)
		}
		if i > 0 && m.Text > ms[i-1].Text {
			t.Errorf("SearchDocuments(%q): match %d (%s, %v) ranks below match %d (%s, %v) with a larger Text",
				q.Terms, i, m.Doc.Path, m.Text, i-1, ms[i-1].Doc.Path, ms[i-1].Text)
		}
	}
	return ms
}

// found returns the paths of ms, sorted, for set comparisons.
func found(ms []docs.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Doc.Path
	}
	slices.Sort(out)
	return out
}

// everywhere is every scope of the suite's documents.
var everywhere = []docs.Scope{ws, ops, opsLong, alice, bob, conv}

// terms is a query for words in every scope.
func terms(words ...string) docs.Query {
	return docs.Query{Terms: words, Scopes: everywhere}
}

// plain is a document at path in scope with content, and no title, tags
// or entities that could match a query.
func plain(scope docs.Scope, path, content string) docs.Document {
	d := doc(scope, path, content)
	d.Title, d.Tags, d.Entities = "", nil, nil
	return d
}

// testSearchAnyTerm: terms are OR-ed; a document matching any one of them
// is found.
func testSearchAnyTerm(t *testing.T, s docs.Store) {
	a := save(t, s, plain(ws, "a.md", "The ingress controller returns 502 errors during deploys."), docs.Save{At: at(0)})
	save(t, s, plain(ws, "b.md", "Certificates are renewed by cert-manager every sixty days."), docs.Save{At: at(0)})
	save(t, s, plain(ws, "c.md", "Lunch is at noon on Thursdays."), docs.Save{At: at(0)})
	tests := []struct {
		terms []string
		want  []string
	}{
		{[]string{"ingress", "certificates"}, []string{"a.md", "b.md"}},
		{[]string{"ingress", "zzyzxunknown"}, []string{"a.md"}},
		{[]string{"zzyzxunknown", "renewed"}, []string{"b.md"}},
		{[]string{"controller", "renewed", "thursdays"}, []string{"a.md", "b.md", "c.md"}},
		{[]string{"zzyzxunknown"}, nil},
	}
	for _, tt := range tests {
		diff(t, fmt.Sprintf("SearchDocuments(%q)", tt.terms), tt.want, found(search(t, s, terms(tt.terms...))))
	}
	// A match carries the whole document.
	ms := search(t, s, terms("ingress"))
	if len(ms) == 1 {
		diff(t, "the matched document", a, ms[0].Doc)
	}
}

// testSearchScopes: only documents of the query's scopes are found; scope
// keys match exactly; no scopes find nothing.
func testSearchScopes(t *testing.T, s docs.Store) {
	for _, sc := range []docs.Scope{ws, ops, opsLong, alice, conv} {
		save(t, s, plain(sc, sc.String()+".md", "Rotate the kubeconfig credentials."), docs.Save{At: at(0)})
	}
	path := func(sc docs.Scope) string { return sc.String() + ".md" }
	tests := []struct {
		name   string
		scopes []docs.Scope
		want   []string
	}{
		{"workspace", []docs.Scope{ws}, []string{path(ws)}},
		{"another user", []docs.Scope{bob}, nil},
		{"the user", []docs.Scope{alice}, []string{path(alice)}},
		{"one channel", []docs.Scope{ops}, []string{path(ops)}},
		{"channel key prefix", []docs.Scope{{Kind: docs.Channel, Key: "slack:T1:C"}}, nil},
		{"other kind, same key", []docs.Scope{{Kind: docs.User, Key: ops.Key}}, nil},
		{"a conversation's view", []docs.Scope{ws, ops, bob, conv}, []string{path(ops), path(conv), path(ws)}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		got := found(search(t, s, docs.Query{Terms: []string{"kubeconfig"}, Scopes: tt.scopes}))
		want := slices.Clone(tt.want)
		slices.Sort(want)
		diff(t, tt.name+": SearchDocuments", want, got)
	}
}

// testSearchStatuses: by default active and draft documents are found and
// archived ones never; Statuses narrows or widens that.
func testSearchStatuses(t *testing.T, s docs.Store) {
	for _, st := range []docs.Status{docs.Active, docs.Draft, docs.Archived} {
		d := plain(ws, string(st)+".md", "Database failover takes two minutes.")
		d.Status = st
		save(t, s, d, docs.Save{At: at(0)})
	}
	tests := []struct {
		statuses []docs.Status
		want     []string
	}{
		{nil, []string{"active.md", "draft.md"}},
		{[]docs.Status{docs.Active}, []string{"active.md"}},
		{[]docs.Status{docs.Draft}, []string{"draft.md"}},
		{[]docs.Status{docs.Archived}, []string{"archived.md"}},
		{[]docs.Status{docs.Active, docs.Archived}, []string{"active.md", "archived.md"}},
	}
	for _, tt := range tests {
		q := terms("failover")
		q.Statuses = tt.statuses
		diff(t, fmt.Sprintf("SearchDocuments(statuses %v)", tt.statuses), tt.want, found(search(t, s, q)))
	}
}

// testSearchLimit: Limit caps the matches; 0 means 20.
func testSearchLimit(t *testing.T, s docs.Store) {
	for i := range 25 {
		save(t, s, plain(ws, fmt.Sprintf("etcd/%02d.md", i), fmt.Sprintf("etcd member %d was replaced.", i)), docs.Save{At: at(0)})
	}
	for _, tt := range []struct{ limit, want int }{{0, 20}, {5, 5}, {1, 1}, {100, 25}} {
		q := terms("etcd", "replaced")
		q.Limit = tt.limit
		if got := len(search(t, s, q)); got != tt.want {
			t.Errorf("SearchDocuments(limit %d) returned %d matches, want %d", tt.limit, got, tt.want)
		}
	}
}

// testSearchRanking: a document matching more, rarer terms ranks above
// every one matching a single term that most documents have. (Whether one
// rare term outranks one common term depends on the store's ranking:
// bm25 weighs rarity, ts_rank_cd does not.)
func testSearchRanking(t *testing.T, s docs.Store) {
	filler := []string{"helm", "argo", "jenkins", "grafana", "vault", "nginx", "redis", "kafka", "istio", "loki", "tempo", "mimir"}
	for _, f := range filler {
		save(t, s, plain(ws, "filler/"+f+".md", "We deploy "+f+" with the usual pipeline on weekdays."), docs.Save{At: at(0)})
	}
	save(t, s, plain(ws, "common.md", "We deploy the billing stack with the pipeline on weekdays."), docs.Save{At: at(0)})
	save(t, s, plain(ws, "one-rare.md", "An etcd member was replaced after the disk failed."), docs.Save{At: at(0)})
	save(t, s, plain(ws, "two-rare.md", "The etcd quorum was lost after the disk failed."), docs.Save{At: at(0)})

	ms := search(t, s, docs.Query{Terms: []string{"deploy", "etcd", "quorum"}, Scopes: []docs.Scope{ws}, Limit: 50})
	var order []string
	for _, m := range ms {
		order = append(order, m.Doc.Path)
	}
	if len(order) != len(filler)+3 {
		t.Errorf("SearchDocuments found %d documents, want %d (every one matches a term): %q", len(order), len(filler)+3, order)
	}
	if len(order) == 0 || order[0] != "two-rare.md" {
		t.Errorf("ranking = %q, want two-rare.md (etcd, quorum) first", order)
	}
	for _, p := range []string{"one-rare.md", "common.md"} {
		if !slices.Contains(order, p) {
			t.Errorf("%s not found: %q", p, order)
		}
	}
}

// testSearchFields: the title, tags and entity values are searched as the
// content is; entity values are split into words.
func testSearchFields(t *testing.T, s docs.Store) {
	title := plain(ws, "t.md", "Consumers fall behind when partitions move.")
	title.Title = "Kafka consumer lag"
	tags := plain(ws, "g.md", "Plans must be reviewed before apply.")
	tags.Tags = []string{"terraform", "iac"}
	ents := plain(ws, "e.md", "Roll back the last release with helm rollback.")
	ents.Entities = map[string][]string{"service": {"payments-api"}, "environment": {"prod"}}
	for _, d := range []docs.Document{title, tags, ents} {
		save(t, s, d, docs.Save{At: at(0)})
	}
	for _, tt := range []struct {
		term string
		want []string
	}{
		{"kafka", []string{"t.md"}},
		{"terraform", []string{"g.md"}},
		{"iac", []string{"g.md"}},
		{"payments", []string{"e.md"}},
		{"api", []string{"e.md"}},
		{"prod", []string{"e.md"}},
	} {
		diff(t, "SearchDocuments("+tt.term+")", tt.want, found(search(t, s, terms(tt.term))))
	}
}

// testSearchStemming: English words are found by their other forms.
func testSearchStemming(t *testing.T, s docs.Store) {
	save(t, s, plain(ws, "crash.md", "The pod restarts every five minutes."), docs.Save{At: at(0)})
	save(t, s, plain(ws, "job.md", "The backup job failed twice."), docs.Save{At: at(0)})
	for _, tt := range []struct {
		term string
		want []string
	}{
		{"restarting", []string{"crash.md"}},
		{"restart", []string{"crash.md"}},
		{"restarted", []string{"crash.md"}},
		{"failing", []string{"job.md"}},
		{"backups", []string{"job.md"}},
		{"pods", []string{"crash.md"}},
	} {
		diff(t, "SearchDocuments("+tt.term+")", tt.want, found(search(t, s, terms(tt.term))))
	}
}

// testSearchFollowsUpdates: the index follows every change of a document
// in the save that makes it: content, scope and status.
func testSearchFollowsUpdates(t *testing.T, s docs.Store) {
	d := save(t, s, plain(ops, "cache.md", "Sessions live in redis."), docs.Save{At: at(0)})
	d.Content = "Sessions live in memcached."
	d = save(t, s, d, docs.Save{At: at(time.Minute)})
	diff(t, "old word", []string(nil), found(search(t, s, terms("redis"))))
	ms := search(t, s, terms("memcached"))
	if len(ms) != 1 || ms[0].Doc.Version != 2 {
		t.Fatalf("SearchDocuments(memcached) = %+v, want the document at version 2", ms)
	}
	diff(t, "the matched document", d, ms[0].Doc)

	d.Scope = ws
	d = save(t, s, d, docs.Save{At: at(2 * time.Minute)})
	diff(t, "old scope", []string(nil), found(search(t, s, docs.Query{Terms: []string{"memcached"}, Scopes: []docs.Scope{ops}})))
	diff(t, "new scope", []string{"cache.md"}, found(search(t, s, docs.Query{Terms: []string{"memcached"}, Scopes: []docs.Scope{ws}})))

	d.Status = docs.Archived
	save(t, s, d, docs.Save{At: at(3 * time.Minute)})
	diff(t, "archived", []string(nil), found(search(t, s, terms("memcached"))))
}

// testSearchEmptyAndGarbage: no terms find nothing; odd terms are words,
// not syntax, and never an error.
func testSearchEmptyAndGarbage(t *testing.T, s docs.Store) {
	save(t, s, plain(ws, "a.md", "The ingress controller returns 502 errors."), docs.Save{At: at(0)})
	for _, q := range []docs.Query{
		{Scopes: everywhere},
		{Terms: []string{}, Scopes: everywhere},
		{Terms: []string{""}, Scopes: everywhere},
	} {
		diff(t, fmt.Sprintf("SearchDocuments(%q)", q.Terms), []string(nil), found(search(t, s, q)))
	}
	// Words that are operators in some query syntax are words here.
	diff(t, "SearchDocuments with operator words", []string{"a.md"},
		found(search(t, s, terms("or", "ingress", "and", "not", "near"))))
	diff(t, "SearchDocuments(502)", []string{"a.md"}, found(search(t, s, terms("502"))))
	garbage := []string{`"`, `""`, `*`, `(`, `)`, `:`, `-`, `^`, `'`, `\`, `a"b`, `title:ingress`, `ingress*`,
		`NEAR(a b)`, `'; DROP TABLE memory_docs; --`, `!!! ((`, `&|!<->`, "ünïcödé", "日本語", "\t\n", strings.Repeat("x", 2000)}
	for _, g := range garbage {
		if _, err := s.SearchDocuments(t.Context(), terms(g)); err != nil {
			t.Errorf("SearchDocuments(%q): %v", g, err)
		}
	}
	if _, err := s.SearchDocuments(t.Context(), terms(garbage...)); err != nil {
		t.Errorf("SearchDocuments(all the garbage): %v", err)
	}
}
