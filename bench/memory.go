package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// Figure 10's targets (the benchmarks issue).
const (
	retrievalP99Max = 20 * time.Millisecond
	prepareP99Max   = 25 * time.Millisecond
	recallAt3Min    = 0.9
)

// MemoryOptions size figure 10.
type MemoryOptions struct {
	// Sizes are the stores' sizes in documents, ascending (default 10,000
	// and 100,000): the labelled corpus, then generated documents.
	Sizes []int
	// Searches is the number of timed searches per store and size
	// (default 500) and Prepares that of memory_prepare retrievals at the
	// first size (default 500); each stops early after Budget (default
	// 20 s), so that a slow store still gives its figure in time.
	Searches, Prepares int
	Budget             time.Duration
}

func (o *MemoryOptions) defaults() {
	if len(o.Sizes) == 0 {
		o.Sizes = []int{10_000, 100_000}
	}
	if o.Searches == 0 {
		o.Searches = 500
	}
	if o.Prepares == 0 {
		o.Prepares = 500
	}
	if o.Budget == 0 {
		o.Budget = 20 * time.Second
	}
}

// The conversation figure 10 retrieves for: a Slack thread of a generated
// channel, by a generated user, so that every kind of scope is visible.
var (
	benchConv   = genConversation(7, 3)
	benchPerson = genUser(42)
)

// seedBatch is how many generated documents one bulk import holds.
const seedBatch = 20_000

// memStore is one store of figure 10 as it fills.
type memStore struct {
	name   string
	store  docs.Store
	m      *memory.Memory
	corpus memory.ImportReport
	n      int           // documents held
	seeded time.Duration // filling it to n
	err    error         // why it is not measured (PostgreSQL only)
}

// MemoryRetrieval is figure 10: long-term memory retrieval at opt.Sizes
// documents on SQLite and on PostgreSQL ((*memory.Memory).Search as
// memory_prepare calls it), memory_prepare's added latency per turn at the
// first size on SQLite ((*memory.Memory).Retrieve, token counting
// included), and retrieval quality on the labelled set
// (memory/testdata/queries.yaml over memory/testdata/corpus, with
// memory.Evaluate). Both stores are filled at once, and measured one
// after the other with nothing else running.
func MemoryRetrieval(ctx context.Context, opt MemoryOptions) ([]Row, error) {
	opt.defaults()
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	corpus := filepath.Join(root, "memory", "testdata", "corpus")
	labelled, err := readLabelled(filepath.Join(root, "memory", "testdata", "queries.yaml"))
	if err != nil {
		return nil, err
	}
	questions := make([]string, len(labelled))
	for i, q := range labelled {
		questions[i] = q.Text
	}
	now := time.Now()
	gen, err := newMemGen(corpus, 1, now)
	if err != nil {
		return nil, err
	}
	qgen, err := newMemGen(corpus, 2, now) // the same words, other draws
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "opsgate-bench-memory-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	lite, err := sqlite.Open(ctx, filepath.Join(dir, "opsgate.db"))
	if err != nil {
		return nil, err
	}
	defer lite.Close()
	sq, pg := &memStore{name: "SQLite", store: lite}, &memStore{name: "PostgreSQL"}
	stores := []*memStore{sq, pg}

	// PostgreSQL starts and takes the corpus while SQLite takes it and
	// the labelled queries are evaluated (counts, not timings).
	var wg sync.WaitGroup
	var stopPG func()
	wg.Go(func() {
		if pg.store, stopPG, pg.err = startPostgres(ctx); pg.err == nil {
			pg.err = pg.importCorpus(ctx, corpus, now)
		}
	})
	defer func() {
		wg.Wait()
		if stopPG != nil {
			stopPG()
		}
	}()
	if err := sq.importCorpus(ctx, corpus, now); err != nil {
		return nil, fmt.Errorf("SQLite: %w", err)
	}
	quality, err := measureQuality(ctx, sq, labelled)
	if err != nil {
		return nil, err
	}
	wg.Wait()

	measured := map[*memStore][]Row{}
	var prepare Row
	for si, size := range opt.Sizes {
		if err := fillStores(ctx, stores, gen, size); err != nil {
			return nil, err
		}
		qs := make([]string, opt.Searches)
		for i := range qs {
			qs[i] = qgen.question(i, questions)
		}
		for _, s := range stores {
			row, err := Row{}, s.err
			if err == nil {
				row, err = measureSearch(ctx, s, qs, opt.Budget, s == sq && si == 0)
			}
			if err != nil && s == sq {
				return nil, fmt.Errorf("%s: %w", s.name, err)
			}
			if err != nil {
				s.err = err
				row = Row{Figure: retrievalFigure(s.name, size), Measured: "not measured",
					Target: fmt.Sprintf("p99 ≤ %s", retrievalP99Max), Result: Miss, Note: err.Error()}
			}
			measured[s] = append(measured[s], row)
		}
		if si == 0 {
			if prepare, err = measurePrepare(ctx, sq, qs, opt.Prepares, opt.Budget); err != nil {
				return nil, fmt.Errorf("%s: %w", sq.name, err)
			}
		}
	}
	return append(append(measured[sq], measured[pg]...), prepare, quality), nil
}

// startPostgres starts a throw-away PostgreSQL (durability off: searches
// only read, and filling is not a figure) and opens the store on it; stop
// closes both.
func startPostgres(ctx context.Context) (docs.Store, func(), error) {
	cluster, err := pgtest.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("no PostgreSQL: %w", err)
	}
	s, err := postgres.Open(ctx, cluster.URL("postgres"))
	if err != nil {
		cluster.Close()
		return nil, nil, err
	}
	stop := func() { s.Close(); cluster.Close() }
	ds, ok := any(s).(docs.Store)
	if !ok {
		stop()
		return nil, nil, fmt.Errorf("this build's PostgreSQL store keeps no memory documents (memory/postgres does not implement docs.Store)")
	}
	return ds, stop, nil
}

// importCorpus imports the labelled corpus into an empty store, as
// `opsgate memory import` does.
func (s *memStore) importCorpus(ctx context.Context, corpus string, now time.Time) error {
	t0 := time.Now()
	s.m = memory.New(s.store, memory.Options{Now: func() time.Time { return now }})
	rep, err := s.m.Import(ctx, corpus, "bench")
	if err != nil {
		return err
	}
	s.corpus = rep
	s.n = len(rep.Created)
	s.seeded += time.Since(t0)
	return nil
}

func retrievalFigure(store string, n int) string {
	return fmt.Sprintf("10. memory retrieval, %s, %s docs", store, thousands(n))
}

// fillStores brings every store to size documents with generated ones,
// imported in bulk into all stores at once; they get the same documents.
func fillStores(ctx context.Context, stores []*memStore, gen *memGen, size int) error {
	for {
		from := size
		for _, s := range stores {
			if s.err == nil {
				from = min(from, s.n)
			}
		}
		if from >= size {
			break
		}
		batch := make([]docs.Document, min(size-from, seedBatch))
		for i := range batch {
			batch[i] = gen.document(from + i)
		}
		var wg sync.WaitGroup
		for _, s := range stores {
			if s.err != nil {
				continue
			}
			wg.Go(func() {
				t0 := time.Now()
				if s.n != from {
					s.err = fmt.Errorf("bench: %s holds %d documents, want %d", s.name, s.n, from)
				} else if s.err = importDocuments(ctx, s.store, batch); s.err == nil {
					s.n += len(batch)
				}
				s.seeded += time.Since(t0)
			})
		}
		wg.Wait()
	}
	if err := stores[0].err; err != nil {
		return fmt.Errorf("%s: fill: %w", stores[0].name, err)
	}
	return nil
}

// search is a search as memory_prepare makes it (see Memory.Retrieve).
func search(text string) memory.SearchRequest {
	return memory.SearchRequest{Text: text, Scopes: memory.Visible(benchConv, benchPerson),
		Limit: memory.DefaultMaxDocs, IncludeDrafts: true}
}

// measureSearch times searches for qs on s, until budget is spent. The
// first row's note says how; the others' only what differs.
func measureSearch(ctx context.Context, s *memStore, qs []string, budget time.Duration, first bool) (Row, error) {
	for _, q := range qs[:min(len(qs), 10)] { // warm the caches
		if _, err := s.m.Search(ctx, search(q)); err != nil {
			return Row{}, err
		}
	}
	took := make([]time.Duration, 0, len(qs))
	found := 0
	deadline := time.Now().Add(budget)
	for _, q := range qs {
		start := time.Now()
		ss, err := s.m.Search(ctx, search(q))
		took = append(took, time.Since(start))
		if err != nil {
			return Row{}, err
		}
		found += len(ss)
		if time.Now().After(deadline) {
			break
		}
	}
	p50, p99 := percentile(took, 50), percentile(took, 99)
	note := fmt.Sprintf("%.1f results per search; filled in %.0f s", float64(found)/float64(len(took)), s.seeded.Seconds())
	if len(took) < len(qs) {
		note = fmt.Sprintf("stopped after %s; ", budget) + note
	}
	if first {
		note = fmt.Sprintf("(*memory.Memory).Search as memory_prepare searches: %d wanted, %d fetched and re-ranked, drafts included, "+
			"in the %d scopes of a Slack thread (memory.Visible); questions: half from memory/testdata/queries.yaml, half generated "+
			"about generated services; documents: the %d of the labelled corpus, then generated ones (150–300 words, Zipf over %d "+
			"words, with services, namespaces, 8 types, every scope kind, 20%% drafts), the same in both stores; ",
			memory.DefaultMaxDocs, 3*memory.DefaultMaxDocs, len(search("").Scopes), len(s.corpus.Created), genVocabulary) + note
	}
	return Row{
		Figure:   retrievalFigure(s.name, s.n),
		Measured: fmt.Sprintf("p50 %s, p99 %s over %d searches", roundMs(p50), roundMs(p99), len(took)),
		Target:   fmt.Sprintf("p99 ≤ %s", retrievalP99Max),
		Result:   verdict(p99 <= retrievalP99Max),
		Note:     note,
		Metrics:  map[string]float64{"docs": float64(s.n), "searches": float64(len(took)), "p50_ms": ms(p50), "p99_ms": ms(p99), "fill_s": s.seeded.Seconds()},
	}, nil
}

// measurePrepare times memory_prepare's retrieval: Retrieve with the
// default budget and document count, which searches, packs the injected
// text counting its tokens, and records what it injected.
func measurePrepare(ctx context.Context, s *memStore, qs []string, count int, budget time.Duration) (Row, error) {
	turn := func(i int) core.MemoryQuery {
		return core.MemoryQuery{ConvKey: benchConv, Person: benchPerson, RunID: fmt.Sprintf("bench-run-%d", i),
			Text: qs[i%len(qs)], TokenBudget: memory.DefaultTokenBudget, MaxDocs: memory.DefaultMaxDocs}
	}
	// A process's first count loads the tokenizer's tables: warm up.
	for i := range 5 {
		if _, err := s.m.Retrieve(ctx, turn(i)); err != nil {
			return Row{}, err
		}
	}
	took := make([]time.Duration, 0, count)
	refs, tokens := 0, 0
	deadline := time.Now().Add(budget)
	for i := range count {
		start := time.Now()
		mc, err := s.m.Retrieve(ctx, turn(i))
		took = append(took, time.Since(start))
		if err != nil {
			return Row{}, err
		}
		n, err := countTokens(mc.Text)
		if err != nil {
			return Row{}, err
		}
		refs, tokens = refs+len(mc.Refs), tokens+n
		if time.Now().After(deadline) {
			break
		}
	}
	p50, p99 := percentile(took, 50), percentile(took, 99)
	return Row{
		Figure:   fmt.Sprintf("10. memory_prepare per turn, %s, %s docs", s.name, thousands(s.n)),
		Measured: fmt.Sprintf("p99 %s (p50 %s) over %d turns", roundMs(p99), roundMs(p50), len(took)),
		Target:   fmt.Sprintf("p99 ≤ %s", prepareP99Max),
		Result:   verdict(p99 <= prepareP99Max),
		Note: fmt.Sprintf("(*memory.Memory).Retrieve, token_budget %d, max_docs %d: the search of the SQLite rows, the injected text "+
			"packed to the budget counting tokens (%s), and what was injected recorded (a durable write); %.1f documents, "+
			"%.0f tokens injected per turn",
			memory.DefaultTokenBudget, memory.DefaultMaxDocs, Encoding, float64(refs)/float64(len(took)), float64(tokens)/float64(len(took))),
		Metrics: map[string]float64{"docs": float64(s.n), "turns": float64(len(took)), "p50_ms": ms(p50), "p99_ms": ms(p99)},
	}, nil
}

// measureQuality is memory.Evaluate on s holding the labelled corpus
// alone.
func measureQuality(ctx context.Context, s *memStore, labelled []memory.LabelledQuery) (Row, error) {
	q, err := memory.Evaluate(ctx, s.m, labelled)
	if err != nil {
		return Row{}, err
	}
	kinds := make([]string, 0, len(q.ByKind))
	for k := range q.ByKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	metrics := map[string]float64{"recall_at_3": q.RecallAt3, "mrr": q.MRR, "hit_at_3": q.HitAt3, "queries": float64(q.Queries)}
	var by []string
	for _, k := range kinds {
		f := q.ByKind[k]
		by = append(by, fmt.Sprintf("%s (%d) recall@3 %.2f, MRR %.2f", k, f.Queries, f.RecallAt3, f.MRR))
		metrics["recall_at_3_"+k], metrics["mrr_"+k] = f.RecallAt3, f.MRR
	}
	return Row{
		Figure:   "10. memory retrieval quality, labelled set",
		Measured: fmt.Sprintf("recall@3 %.2f, MRR %.2f over %d queries", q.RecallAt3, q.MRR, q.Queries),
		Target:   fmt.Sprintf("recall@3 ≥ %.1f", recallAt3Min),
		Result:   verdict(q.RecallAt3 >= recallAt3Min),
		Note: fmt.Sprintf("memory.Evaluate: memory/testdata/queries.yaml over the %d documents of memory/testdata/corpus "+
			"(imported, %d skipped) on SQLite; %d queries with a relevant document outside the first %d; by kind: %s",
			len(s.corpus.Created), len(s.corpus.Skipped), len(q.Misses), memory.QualityK, strings.Join(by, "; ")),
		Metrics: metrics,
	}, nil
}

// bulkImporter is a store's fast path for many new documents
// (sqlite.Store.ImportDocuments, postgres.Store.ImportDocuments).
type bulkImporter interface {
	ImportDocuments(ctx context.Context, ds []docs.Document) error
}

// slowImportMax is how many documents a store without a bulk path is
// given one SaveDocument each (a transaction each) before the figure gives
// up on it.
const slowImportMax = 2_000

// importDocuments saves ds in store, in bulk when the store can.
func importDocuments(ctx context.Context, store docs.Store, ds []docs.Document) error {
	if b, ok := store.(bulkImporter); ok {
		return b.ImportDocuments(ctx, ds)
	}
	if len(ds) > slowImportMax {
		return fmt.Errorf("bench: the store has no bulk path (ImportDocuments), and %d documents saved one transaction each would take minutes", len(ds))
	}
	for _, d := range ds {
		if _, err := store.SaveDocument(ctx, d, docs.Save{At: d.UpdatedAt}); err != nil {
			return err
		}
	}
	return nil
}

// readLabelled reads the labelled queries.
func readLabelled(path string) ([]memory.LabelledQuery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return memory.ReadQueries(f)
}

// roundMs rounds d for the table: to 0.01 ms below 10 ms, 0.1 ms below
// a second, 1 ms above.
func roundMs(d time.Duration) time.Duration {
	switch {
	case d < 10*time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d < time.Second:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// thousands writes n with thousands separators: 100,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
