package memory

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

// benchQuestions are what on-call engineers ask, short and long.
var benchQuestions = []string{
	"payments-api 502 after deploy",
	"how do I roll back checkout-web with helm?",
	"orders-db pgbouncer pool exhausted, what do I do",
	"hey, so honestly I have no idea why the search-api pods keep returning 503s since the elasticsearch rolling restart this morning, is there anything written down about what to check first and how to get the cluster back to green without losing the index?",
	"kafka broker disk pressure in prod",
	"coredns timeouts across the cluster",
	"what did we learn from INC-2142?",
	"invoice-generator pods pending for 20 minutes, autoscaler not adding nodes",
	"cert-manager certificate not renewing, acme dns01 challenge failing",
	"the notification-service is crashlooping after the configmap change, can someone tell me how we handled this last time and what the safe way to roll it back is without losing queued messages",
	"refunds consumer lag growing",
	"prometheus pvc full",
}

// benchMemory is a Memory over an SQLite store of n documents: the corpus
// of testdata (imported) and generated runbooks made of its words, saved
// in one transaction.
func benchMemory(b *testing.B, n int) *Memory {
	b.Helper()
	start := time.Now()
	s := openSQLite(b)
	m := New(s, Options{})
	importDir(b, m, filepath.Join("testdata", "corpus"))
	have, err := s.Documents(b.Context(), docs.Filter{})
	if err != nil {
		b.Fatal(err)
	}
	g := newDocGen(b, 1)
	gen := make([]docs.Document, 0, n)
	for i := len(have); i < n; i++ {
		gen = append(gen, g.doc(i))
	}
	if err := s.ImportDocuments(b.Context(), gen); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d documents in %v", n, time.Since(start).Round(time.Millisecond))
	return m
}

// docGen makes runbook-like documents from the corpus's words, drawn as
// often as the corpus uses them.
type docGen struct {
	rnd      *rand.Rand
	words    []string // every word of the corpus, with repeats
	services []string
}

func newDocGen(b testing.TB, seed uint64) *docGen {
	g := &docGen{rnd: rand.New(rand.NewPCG(seed, 2))}
	err := filepath.WalkDir(filepath.Join("testdata", "corpus"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		g.words = append(g.words, strings.Fields(string(body))...)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 400 {
		g.services = append(g.services, fmt.Sprintf("%s-%s", g.word(), []string{"api", "worker", "service", "sync", "gateway"}[i%5]))
	}
	return g
}

func (g *docGen) word() string {
	for {
		w := strings.ToLower(strings.Trim(g.words[g.rnd.IntN(len(g.words))], "`*#.,:;()[]\"'"))
		if len(w) > 2 && !strings.ContainsAny(w, "`*#/={}") {
			return w
		}
	}
}

func (g *docGen) sentence(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	return strings.Join(ws, " ") + "."
}

func (g *docGen) doc(i int) docs.Document {
	svc := g.services[g.rnd.IntN(len(g.services))]
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s\n\n", svc, g.sentence(5))
	for range 4 + g.rnd.IntN(6) {
		fmt.Fprintf(&b, "## %s\n\n", g.sentence(3))
		for range 2 + g.rnd.IntN(4) {
			fmt.Fprintf(&b, "- %s\n", g.sentence(8+g.rnd.IntN(10)))
		}
		b.WriteString("\n")
	}
	types := []docs.Type{docs.Runbook, docs.Runbook, docs.IncidentLesson, docs.ServiceContext, docs.VerificationChecklist}
	return docs.Document{
		Scope: docs.WorkspaceScope, Path: fmt.Sprintf("gen/%05d.md", i), Title: svc + " " + g.sentence(5),
		Content: b.String(), Type: types[g.rnd.IntN(len(types))], Status: docs.Active, Trust: docs.AdminApproved,
		Entities: map[string][]string{"service": {svc}, "namespace": {strings.SplitN(svc, "-", 2)[0]}, "environment": {"prod"}},
	}
}

// BenchmarkRetrieve is memory_prepare's added latency: one Retrieve
// (budget 2,200 tokens, 6 documents) over 10,000 documents in SQLite, the
// questions cycling through benchQuestions. Besides ns/op it reports the
// 50th and 99th percentile in milliseconds (target: p99 ≤ 25 ms). "warm"
// is the steady state, where the documents' token counts are remembered
// from earlier turns; "cold" forgets them before every turn.
//
//	go test ./memory -run '^$' -bench Retrieve -benchtime 2000x
func BenchmarkRetrieve(b *testing.B) {
	m := benchMemory(b, 10_000)
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) { benchRetrieve(b, m, cold) })
	}
}

func benchRetrieve(b *testing.B, m *Memory, cold bool) {
	ctx := b.Context()
	var took []time.Duration
	injected := 0
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		q := core.MemoryQuery{ConvKey: "slack:T1:C1:1.1", Person: "alice", RunID: fmt.Sprint("r", i),
			Text: benchQuestions[i%len(benchQuestions)], TokenBudget: 2200, MaxDocs: 6}
		if cold {
			entryTokens.reset()
		}
		start := time.Now()
		mc, err := m.Retrieve(ctx, q)
		took = append(took, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		injected += len(mc.Refs)
		i++
	}
	slices.Sort(took)
	pct := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))]) / 1e6
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(injected)/float64(len(took)), "docs/op")
}
