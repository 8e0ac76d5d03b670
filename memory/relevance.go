package memory

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// coverage is the absolute relevance that memory.min_score is compared
// with (docs/design.md §17, "Relevance floor"): how much of the question a
// document covers. Each distinct term of the question (by stem) weighs its
// idf over every document in memory, so a rare term ("502", "pgbouncer")
// counts for much, a common one ("service", "pods") for little, and a
// term no document uses for the most: a question about something memory
// knows nothing of is covered by nothing. A misspelt term that no document
// uses stands for the words of memory one edit away (two for long words),
// at their weight. Coverage is the weight of the terms the document's
// title, path, tags, entities or content hold, over the weight of the
// question's CoverageTerms heaviest terms (all of a short question's): a
// long question is not expected to be covered word for word. Unlike the
// Text component, normalised to the best match of the search and so high
// for the top hit of any question, Coverage does not depend on what else
// matched.
func (ts termStats) coverage(qts []queryTerm, d docs.Document) float64 {
	if len(qts) == 0 {
		return 0
	}
	has := ts.cache.docStems(d)
	var covered float64
	for _, qt := range qts {
		for _, s := range qt.stems {
			if has[s] {
				covered += qt.w
				break
			}
		}
	}
	var known, unknown []float64
	for _, qt := range qts {
		if qt.unknown {
			unknown = append(unknown, qt.w)
		} else {
			known = append(known, qt.w)
		}
	}
	ws := append(known, unknown[:min(len(unknown), CoverageUnknown)]...)
	slices.Sort(ws)
	var mass float64
	for _, w := range ws[max(0, len(ws)-CoverageTerms):] {
		mass += w
	}
	if mass == 0 {
		return 0
	}
	return min(1, covered/mass)
}

// CoverageUnknown is how many terms no document uses count in the whole,
// at most: two such words say a short question is about something else,
// and in a long one they are mostly the chat around it.
const CoverageUnknown = 2

// CoverageTerms is how many of a question's terms, the heaviest, make the
// whole that Coverage measures a document against.
const CoverageTerms = 5

// queryTerm is one term of a question as Coverage weighs it: the stems
// that count as it (itself, or for a term no document uses, the
// vocabulary's near spellings) and its weight.
type queryTerm struct {
	stems   []string
	w       float64
	unknown bool // no document uses it, nor a near spelling
}

// question weighs q's distinct terms.
func (ts termStats) question(q Question) []queryTerm {
	seen := map[string]bool{}
	var out []queryTerm
	for _, t := range q.Terms {
		s := stem(t)
		if seen[s] {
			continue
		}
		seen[s] = true
		if ts.df[s] > 0 {
			out = append(out, queryTerm{stems: []string{s}, w: ts.idf(s)})
			continue
		}
		qt := queryTerm{stems: []string{s}, w: ts.idf(s), unknown: true}
		if near := ts.near(t); len(near) > 0 {
			qt = queryTerm{stems: near}
			for _, n := range near {
				qt.w = max(qt.w, ts.idf(n))
			}
		}
		out = append(out, qt)
	}
	return out
}

// near is nearWords, remembered until the stats are rebuilt.
func (ts termStats) near(w string) []string {
	c := ts.cache
	c.mu.Lock()
	out, ok := c.near[w]
	c.mu.Unlock()
	if ok {
		return out
	}
	out = ts.nearWords(w)
	c.mu.Lock()
	c.near[w] = out
	c.mu.Unlock()
	return out
}

// nearWords returns the stems of the vocabulary's words within one edit of w
// (a transposition counts as one), two for words of eight letters or
// more; none for words shorter than five letters, where one edit makes
// another word ("snow", "show").
func (ts termStats) nearWords(w string) []string {
	if len(w) < 5 {
		return nil
	}
	limit := 1
	if len(w) >= 8 {
		limit = 2
	}
	var out []string
	for v, s := range ts.vocab {
		if abs(len(v)-len(w)) > limit || !slices.Contains(out, s) && editDistance(w, v, limit) > limit {
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions, adjacent transpositions), or
// limit+1 once it must exceed limit.
func editDistance(a, b string, limit int) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// docStems are the stems of every word of a document: its metaStems and
// its content's.
func docStems(d docs.Document) map[string]bool {
	has := metaStems(d)
	for _, w := range words(d.Content) {
		has[stem(w)] = true
	}
	return has
}

// statsTTL is how long the document frequencies are used before they are
// rebuilt, in the background: they weigh terms, nothing more, and a
// document written meanwhile (by another replica, or the CLI) shifts the
// weights a little until then. An import through this Memory makes the
// next retrieval rebuild them first.
const statsTTL = 5 * time.Minute

// termStats are the document frequencies of stems over all documents.
type termStats struct {
	n  int
	df map[string]int
	// vocab maps every word of every document to its stem, for near.
	vocab map[string]string
	cache *coverageCache
}

// maxCachedDocs bounds coverageCache.stems; it is emptied when full.
const maxCachedDocs = 4096

// coverageCache remembers, until the stats are rebuilt, the stems of the
// documents seen (by id and version: tokenizing a runbook is the costliest
// step of Coverage, and the same ones come back turn after turn) and the
// near spellings of unknown words.
type coverageCache struct {
	mu    sync.Mutex
	stems map[string]map[string]bool
	near  map[string][]string
}

func newCoverageCache() *coverageCache {
	return &coverageCache{stems: map[string]map[string]bool{}, near: map[string][]string{}}
}

// docStems is docStems(d), remembered. The map returned is shared: read
// only.
func (c *coverageCache) docStems(d docs.Document) map[string]bool {
	key := d.ID + ":" + strconv.Itoa(d.Version)
	c.mu.Lock()
	has, ok := c.stems[key]
	c.mu.Unlock()
	if ok && d.ID != "" {
		return has
	}
	has = docStems(d)
	c.mu.Lock()
	if len(c.stems) >= maxCachedDocs {
		c.stems = map[string]map[string]bool{}
	}
	c.stems[key] = has
	c.mu.Unlock()
	return has
}

// idf is BM25's inverse document frequency, always positive: ln(1 +
// (N − df + ½) / (df + ½)). A stem no document has weighs ln(2N + 2).
func (ts termStats) idf(stem string) float64 {
	df := float64(ts.df[stem])
	return math.Log(1 + (float64(ts.n)-df+0.5)/(df+0.5))
}

// statsCache holds the last termStats built, shared by a Memory's calls.
type statsCache struct {
	build sync.Mutex // held while building
	mu    sync.Mutex
	stats termStats
	at    time.Time // zero: to build before use
	busy  bool      // a background rebuild is running
}

// invalidate makes the next call rebuild before it answers.
func (c *statsCache) invalidate() {
	c.mu.Lock()
	c.at = time.Time{}
	c.mu.Unlock()
}

// termStats returns the document frequencies. The first call (and the
// first after an import) builds them from every document of the store;
// afterwards stats older than statsTTL are rebuilt in the background and
// the old ones used meanwhile, so no retrieval waits for a rebuild.
func (m *Memory) termStats(ctx context.Context) (termStats, error) {
	c := m.stats
	c.mu.Lock()
	stats, at := c.stats, c.at
	stale := !at.IsZero() && time.Since(at) > statsTTL && !c.busy
	if stale {
		c.busy = true
	}
	c.mu.Unlock()
	switch {
	case stale:
		go func() {
			if _, err := m.rebuildStats(context.WithoutCancel(ctx)); err != nil {
				m.opt.Logger.Warn("memory: rebuild term statistics", "err", err)
			}
		}()
		return stats, nil
	case !at.IsZero():
		return stats, nil
	}
	return m.rebuildStats(ctx)
}

// rebuildStats builds the document frequencies from every document.
func (m *Memory) rebuildStats(ctx context.Context) (termStats, error) {
	c := m.stats
	c.build.Lock()
	defer c.build.Unlock()
	defer func() {
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
	}()
	c.mu.Lock()
	if !c.at.IsZero() && time.Since(c.at) <= statsTTL {
		defer c.mu.Unlock()
		return c.stats, nil // built by another call meanwhile
	}
	c.mu.Unlock()
	all, err := m.store.Documents(ctx, docs.Filter{})
	if err != nil {
		return termStats{}, err
	}
	ts := termStats{n: len(all), df: map[string]int{}, vocab: map[string]string{}, cache: newCoverageCache()}
	for _, d := range all {
		for s := range docStems(d) {
			ts.df[s]++
		}
		for _, w := range words(d.Content + " " + d.Title) {
			if len(w) >= 4 {
				if _, ok := ts.vocab[w]; !ok {
					ts.vocab[w] = stem(w)
				}
			}
		}
	}
	c.mu.Lock()
	c.stats, c.at = ts, time.Now()
	c.mu.Unlock()
	return ts, nil
}
