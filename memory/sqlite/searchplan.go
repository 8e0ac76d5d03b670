package sqlite

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"
)

// The search plan. FTS5 ranks a match in a few microseconds (bm25 reads
// the document's size from memory_fts_docsize for every row), and before
// the first row bm25 counts the documents of each word it ranks (its idf)
// by reading the word's whole list. A plain OR of a question's words over
// 100,000 documents, most of which have some of them, is so hundreds of
// milliseconds to seconds. So SearchDocuments first estimates how many
// documents have each word (from where in the index its sampleSize-th
// document is, kept in dfCache for a while) and then ranks
//
//   - every word, when the store has at most rankBudget documents or the
//     words together at most rankBudget: exact;
//   - else the rarest words that fit in rankBudget together, over all
//     documents: a common word adds little to bm25 (a word in more than
//     half the documents nothing: its idf is clamped to 1e-6), and words
//     in more than commonShare of the documents are never ranked while
//     rarer ones are;
//   - else (even the rarest word is in more than rankBudget documents) the
//     rarest words that fit in idfBudget, over the newest documents, as
//     many as have about rankBudget matches;
//   - else (the rarest word is in more than idfBudget documents: every
//     word of the query is in a good part of the store) the newest
//     documents with the rarest words, all with the Text of the rarest
//     word's idf: no text relevance sets them apart that is worth reading
//     the index for.
//
// BenchmarkSearchDocuments measures it: about 5 ms of CPU a search at
// 100,000 generated documents whatever the query's length, where the exact
// OR takes 0.1 to 6 s. The price is recall on queries of common words: of
// the exact bm25's best 18, it finds about 35% (3 words), 17% (10) and 6%
// (25) at 100,000 documents, 60%, 45% and 30% at 10,000, in a corpus
// where no word is in fewer than 1 document of 200. Rarer words, as names
// of services and incidents are, fit the budget and are ranked exactly.
// The budgets are variables so that tests can shrink them.
var (
	rankBudget float64 = 1_000  // matches ranked with bm25
	idfBudget  float64 = 15_000 // index entries read for bm25's idf
)

const (
	commonShare = 0.4
	sampleSize  = 64
	newestWords = 3 // words of a newest-first search
)

// searchPlan is how SearchDocuments ranks.
type searchPlan struct {
	words  []string
	after  int64   // rank only documents with a larger seq
	recent bool    // newest first, all with Text text
	text   float64 // the Text of a newest-first match
}

// wordStat is a query word and about how many documents have it.
type wordStat struct {
	word string
	df   float64
}

// planSearch chooses how to rank words (see the search plan).
func (s *Store) planSearch(ctx context.Context, words []string) (searchPlan, error) {
	var last int64 // the largest seq: about the number of documents
	if err := s.r.queryRow(ctx, `SELECT coalesce(max(seq), 0) FROM memory_docs`).Scan(&last); err != nil {
		return searchPlan{}, err
	}
	if float64(last) <= rankBudget {
		return searchPlan{words: words}, nil
	}
	dfs, missing := s.dfs.get(words, last, time.Now())
	if len(missing) > 0 {
		sampled, err := s.sampleDF(ctx, missing, last)
		if err != nil {
			return searchPlan{}, err
		}
		s.dfs.put(sampled, last)
		maps.Copy(dfs, sampled)
	}
	var stats []wordStat
	var total float64
	for _, w := range words {
		if df := dfs[w]; df > 0 {
			stats = append(stats, wordStat{w, df})
			total += df
		}
	}
	if total <= rankBudget {
		return searchPlan{words: statWords(stats)}, nil
	}
	slices.SortFunc(stats, byDF)
	n := float64(last)
	common := func(st wordStat) bool { return st.df > commonShare*n }
	if stats[0].df <= rankBudget {
		return searchPlan{words: statWords(prefix(stats, rankBudget, common))}, nil
	}
	if stats[0].df <= idfBudget {
		keep := prefix(stats, idfBudget, common)
		var sum float64
		for _, st := range keep {
			sum += st.df
		}
		return searchPlan{words: statWords(keep), after: last - int64(n*rankBudget/sum)}, nil
	}
	keep := stats[:min(newestWords, len(stats))]
	if i := slices.IndexFunc(keep, common); i > 0 {
		keep = keep[:i]
	}
	return searchPlan{words: statWords(keep), recent: true, text: idf(stats[0].df, n)}, nil
}

// prefix returns the rarest of stats (sorted) whose df add up to at most
// budget, stopping at the first common one; at least the rarest.
func prefix(stats []wordStat, budget float64, common func(wordStat) bool) []wordStat {
	sum := stats[0].df
	i := 1
	for ; i < len(stats) && sum+stats[i].df <= budget && !common(stats[i]); i++ {
		sum += stats[i].df
	}
	return stats[:i]
}

func statWords(stats []wordStat) []string {
	ws := make([]string, len(stats))
	for i, st := range stats {
		ws[i] = st.word
	}
	return ws
}

// sampleDF estimates how many documents have each word from where the
// sampleSize-th of them is (last is the largest seq): one statement for
// all the words, at most sampleSize index entries each. Seqs grow with
// time, so this assumes that old documents use words as new ones do.
func (s *Store) sampleDF(ctx context.Context, words []string, last int64) (map[string]float64, error) {
	quoted, err := json.Marshal(quote(words))
	if err != nil {
		return nil, err
	}
	// Per word, packed in one integer as n + 128*seq: how many of its first
	// sampleSize documents there are and the seq of the last one.
	rows, err := s.r.query(ctx, `SELECT j.key,
		(SELECT count(*) + 128 * coalesce(max(r), 0) FROM (SELECT rowid AS r FROM memory_fts WHERE memory_fts MATCH j.value LIMIT `+fmt.Sprint(sampleSize)+`))
		FROM json_each(?1) j`, string(quoted))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	dfs := make(map[string]float64, len(words))
	for rows.Next() {
		var i int
		var packed int64
		if err := rows.Scan(&i, &packed); err != nil {
			return nil, err
		}
		n, seq := packed%128, packed/128
		df := float64(n)
		if n == sampleSize && seq > 0 {
			df = float64(n) * float64(last) / float64(seq)
		}
		dfs[words[i]] = df
	}
	return dfs, rows.Err()
}

// dfCache keeps planSearch's estimates for a while: they change slowly,
// and sampling a word costs a search of its own. All are dropped when the
// store has grown by a tenth, after dfTTL, or when there are dfCacheMax.
// The zero value is empty.
type dfCache struct {
	mu   sync.Mutex
	last int64 // the largest seq when the estimates were made
	at   time.Time
	dfs  map[string]float64
}

const (
	dfTTL      = 10 * time.Minute
	dfCacheMax = 50_000 // words
)

// get returns the estimates it has for words and the words it has none for.
func (c *dfCache) get(words []string, last int64, now time.Time) (map[string]float64, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dfs == nil || last > c.last+c.last/10 || last < c.last || now.Sub(c.at) > dfTTL || len(c.dfs) > dfCacheMax {
		c.dfs, c.last, c.at = map[string]float64{}, last, now
	}
	dfs := make(map[string]float64, len(words))
	var missing []string
	for _, w := range words {
		if df, ok := c.dfs[w]; ok {
			dfs[w] = df
		} else {
			missing = append(missing, w)
		}
	}
	return dfs, missing
}

// put adds estimates made when the largest seq was last.
func (c *dfCache) put(dfs map[string]float64, last int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dfs != nil && last == c.last {
		maps.Copy(c.dfs, dfs)
	}
}

// idf is bm25's weight of a word that df of n documents have.
func idf(df, n float64) float64 {
	return max(math.Log((n-df+0.5)/(df+0.5)), 1e-6)
}

// byDF sorts word statistics rarest first.
func byDF(a, b wordStat) int { return cmp.Compare(a.df, b.df) }
