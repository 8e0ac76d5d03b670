package memory

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"

	"gopkg.in/yaml.v3"
)

// LabelledQuery is a question with the documents that answer it, for
// measuring retrieval (memory/testdata/queries.yaml).
type LabelledQuery struct {
	Text string `yaml:"q"`
	// Relevant are the paths of the documents that answer it, most useful
	// first.
	Relevant []string `yaml:"relevant"`
	// Kind groups queries in the figures: short, vague, long, typo, ….
	Kind string `yaml:"kind"`
	// Conv and Person say who asks: the search covers Visible(Conv,
	// Person). Empty, the workspace only.
	Conv   string `yaml:"conv,omitempty"`
	Person string `yaml:"person,omitempty"`
}

// ReadQueries reads labelled queries: a YAML list of LabelledQuery.
func ReadQueries(r io.Reader) ([]LabelledQuery, error) {
	var qs []LabelledQuery
	if err := yaml.NewDecoder(r).Decode(&qs); err != nil {
		return nil, fmt.Errorf("memory: labelled queries: %w", err)
	}
	for i, q := range qs {
		if q.Text == "" || (len(q.Relevant) == 0) != (q.Kind == OffTopic) {
			return nil, fmt.Errorf("memory: labelled query %d: needs q, and relevant unless (only if) off-topic", i+1)
		}
	}
	return qs, nil
}

// OffTopic is the kind of a labelled query that nothing in memory
// answers: it has no relevant documents, and memory_prepare must inject
// nothing for it (the relevance floor). Evaluate leaves such queries out.
const OffTopic = "offtopic"

// QualityK is the cut-off of recall and hits: what fits in one turn's
// memory, roughly.
const QualityK = 3

// Quality is how well retrieval answers labelled queries.
type Quality struct {
	Figures
	ByKind map[string]Figures
	// Misses are the queries with a relevant document outside the top
	// QualityK, worst first.
	Misses []Miss
}

// Figures are the measures over a set of queries.
type Figures struct {
	Queries int
	// RecallAt3 is the mean share of a query's relevant documents found in
	// its first QualityK results.
	RecallAt3 float64
	// HitAt3 is the share of queries with at least one relevant document
	// in the first QualityK.
	HitAt3 float64
	// MRR is the mean reciprocal rank of the first relevant document (0
	// when none is in the first ten).
	MRR float64
}

// Miss is a query that did not find all it should have.
type Miss struct {
	Query    LabelledQuery
	Recall   float64
	Rank     int      // of the first relevant document, 0 for none
	Returned []string // the first QualityK paths
}

// String is the figures on one line.
func (f Figures) String() string {
	return fmt.Sprintf("n=%d recall@3=%.3f hit@3=%.3f MRR=%.3f", f.Queries, f.RecallAt3, f.HitAt3, f.MRR)
}

// Evaluate runs each query through m.Search (ten results, drafts
// included) and measures the results against its labels.
func Evaluate(ctx context.Context, m *Memory, queries []LabelledQuery) (Quality, error) {
	type sums struct{ n, recall, hit, rr float64 }
	all := sums{}
	kinds := map[string]*sums{}
	var misses []Miss
	for _, q := range queries {
		if q.Kind == OffTopic {
			continue
		}
		rs, err := m.Search(ctx, SearchRequest{Text: q.Text, Scopes: Visible(q.Conv, q.Person), Limit: 10, IncludeDrafts: true})
		if err != nil {
			return Quality{}, fmt.Errorf("memory: evaluate %q: %w", q.Text, err)
		}
		paths := make([]string, len(rs))
		for i, r := range rs {
			paths[i] = r.Doc.Path
		}
		top := paths[:min(QualityK, len(paths))]
		found := 0
		for _, p := range q.Relevant {
			if slices.Contains(top, p) {
				found++
			}
		}
		recall := float64(found) / float64(len(q.Relevant))
		rank := 0
		for i, p := range paths {
			if slices.Contains(q.Relevant, p) {
				rank = i + 1
				break
			}
		}
		s := sums{n: 1, recall: recall}
		if found > 0 {
			s.hit = 1
		}
		if rank > 0 {
			s.rr = 1 / float64(rank)
		}
		k := kinds[q.Kind]
		if k == nil {
			k = &sums{}
			kinds[q.Kind] = k
		}
		for _, t := range []*sums{&all, k} {
			t.n += s.n
			t.recall += s.recall
			t.hit += s.hit
			t.rr += s.rr
		}
		if recall < 1 {
			misses = append(misses, Miss{Query: q, Recall: recall, Rank: rank, Returned: slices.Clone(top)})
		}
	}
	figures := func(s sums) Figures {
		if s.n == 0 {
			return Figures{}
		}
		return Figures{Queries: int(s.n), RecallAt3: s.recall / s.n, HitAt3: s.hit / s.n, MRR: s.rr / s.n}
	}
	out := Quality{Figures: figures(all), ByKind: map[string]Figures{}, Misses: misses}
	for k, s := range kinds {
		out.ByKind[k] = figures(*s)
	}
	sort.SliceStable(out.Misses, func(i, j int) bool { return out.Misses[i].Recall < out.Misses[j].Recall })
	return out, nil
}
