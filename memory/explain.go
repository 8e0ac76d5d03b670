package memory

import (
	"fmt"
	"io"
	"strings"
)

// WriteExplain writes why a search ranked its results as it did (`opsgate
// memory search QUERY --explain`): the question's terms and intents, the
// weights, then for each result its rank, path, scope, type, trust and
// score, and each component before and after weighting. The output
// depends on nothing but its arguments, so it is golden-tested.
func WriteExplain(w io.Writer, query string, results []Scored) error {
	q := NewQuestion(query)
	ew := &errWriter{w: w}
	ew.printf("query:   %s\n", oneLine(query))
	ew.printf("terms:   %s\n", strings.Join(q.Terms, " "))
	intents := make([]string, len(q.Intents))
	for i, in := range q.Intents {
		intents[i] = string(in)
	}
	ew.printf("intents: %s\n", strings.Join(intents, " "))
	ew.printf("weights: text %.2f (store %.2f, title %.2f), type %.2f, trust %.2f, entity %.2f, recency %.2f (half-life %.0f days)\n",
		Weights.Text, 1-titleShare, titleShare, Weights.Type, Weights.Trust, Weights.Entity, Weights.Recency, HalfLife.Hours()/24)
	if len(results) == 0 {
		ew.printf("\nno documents matched\n")
	}
	for i, r := range results {
		d := r.Doc
		ew.printf("\n%d. %s  score %.3f\n", i+1, d.Path, r.Score)
		ew.printf("   scope %s, type %s, trust %s, status %s\n", d.Scope, d.Type, d.Trust, d.Status)
		ew.printf("   title    %s\n", oneLine(d.Title))
		matched := "none"
		if len(r.Matched) > 0 {
			matched = strings.Join(r.Matched, " ")
		}
		ew.printf("   text     %.3f × %.2f = %.3f  (store %.3f of the best, raw %.4g; title %.3f: %s)\n",
			r.Text, Weights.Text, r.Text*Weights.Text, r.TextStore, r.TextRaw, r.Title, matched)
		ew.printf("   type     %.3f × %.2f = %.3f  (%s)\n", r.Type, Weights.Type, r.Type*Weights.Type, d.Type)
		ew.printf("   trust    %.3f × %.2f = %.3f  (%s, %s)\n", r.Trust, Weights.Trust, r.Trust*Weights.Trust, d.Trust, d.Status)
		named := "none named"
		if len(r.Entities) > 0 {
			named = strings.Join(r.Entities, ", ")
		}
		ew.printf("   entity   %.3f × %.2f = %.3f  (%s)\n", r.Entity, Weights.Entity, r.Entity*Weights.Entity, named)
		ew.printf("   recency  %.3f × %.2f = %.3f  (%.1f days old)\n", r.Recency, Weights.Recency, r.Recency*Weights.Recency, r.AgeDays)
		ew.printf("   coverage %.3f of the question (not in the score: memory_prepare injects nothing below memory.min_score)\n", r.Coverage)
	}
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
