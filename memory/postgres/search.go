package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/memory/docs"
)

// Search tuning: see SearchDocuments. They bound a search's time whatever
// its terms: ranking reads and ranks each candidate's row (10–30 µs on a
// busy 2-core machine), and the text index reads each entry of a lexeme
// it is asked for (about 0.3 µs).
const (
	// searchBudget is how many documents a search ranks at most.
	searchBudget = 200
	// indexBudget is how many index entries (documents holding a lexeme)
	// choosing the candidates may read.
	indexBudget = 10_000
	// pairTerms is how many of the rarest remaining terms are paired.
	pairTerms = 5
)

// SearchDocuments is retrieval's full-text search (docs.Store): documents
// of the query's scopes and statuses holding any of its terms, ranked by
// ts_rank over the weighted search column: title, then tags and entities,
// then content. (ts_rank_cd, cover density, costs ten times as much per
// document with many OR-ed terms and retrieved no better on
// memory/testdata: recall@3 0.828 against 0.837; length normalisation and
// weighting terms by rarity did not help either.)
//
// OR over a question's words matches most of a large table (a runbook
// collection says "pod" everywhere), and ranking reads every match, so a
// search ranks at most searchBudget candidates, chosen by the terms'
// document frequencies (memory_lexemes), rarest first, as Elasticsearch's
// common-terms query does:
//
//   - documents holding one of the rarest terms, while their frequencies
//     add up to at most the budget;
//   - documents holding two of the next rarest terms (their pairs, by
//     estimated frequency, within what is left of the budget, reading at
//     most indexBudget index entries);
//   - when every term is common, as many documents holding two of them,
//     or failing that the rarest, as the budget allows.
//
// Candidates are ranked by all the terms, so common words still order
// them. When the candidates are fewer than the limit, documents holding
// only common terms fill it up, ranked below every candidate. When the
// terms' frequencies add up to at most the budget (any table of up to
// that many documents) the search is exact.
func (s *Store) SearchDocuments(ctx context.Context, q docs.Query) ([]docs.Match, error) {
	words := queryWords(q.Terms)
	if len(words) == 0 || len(q.Scopes) == 0 {
		return nil, nil
	}
	statuses := q.Statuses
	if len(statuses) == 0 {
		statuses = []docs.Status{docs.Active, docs.Draft}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	var out []docs.Match
	err := s.read(ctx, func(qr querier) error {
		out = nil
		lexemes, total, err := frequencies(ctx, qr, words)
		if err != nil || len(lexemes) == 0 {
			return err // or only stop words
		}
		// Each candidate is ranked as it is read; only the best are then
		// read whole. The statement is planned for its values every time
		// (QueryExecModeExec: not a cached statement, whose generic plan
		// knows neither how rare the terms are nor the limits).
		rows, err := qr.Query(ctx, `WITH cand AS (
				SELECT id, updated_at, ts_rank(search, websearch_to_tsquery('english', $2)) AS rank, false AS fill
				FROM memory_docs
				WHERE search @@ $1::tsquery AND scope = ANY($3) AND status = ANY($4)
				LIMIT $5),
			fill AS (
				SELECT id, updated_at, ts_rank(search, websearch_to_tsquery('english', $2)) AS rank, true AS fill
				FROM memory_docs
				WHERE (SELECT count(*) FROM cand) < $6
					AND search @@ websearch_to_tsquery('english', $2)
					AND scope = ANY($3) AND status = ANY($4)
					AND id NOT IN (SELECT id FROM cand)
				LIMIT $6),
			best AS (
				SELECT * FROM cand UNION ALL SELECT * FROM fill
				ORDER BY fill, rank DESC, updated_at DESC, id LIMIT $6)
			SELECT `+docCols+`, best.rank, best.fill
			FROM best JOIN memory_docs USING (id, updated_at)
			ORDER BY best.fill, best.rank DESC, updated_at DESC, id`, pgx.QueryExecModeExec,
			candidates(lexemes, total), strings.Join(words, " or "), scopeKeys(q.Scopes), statusArray(statuses), searchBudget, limit)
		if err != nil {
			return err
		}
		var fill []bool
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (docs.Match, error) {
			var m docs.Match
			var rank float32
			var f bool
			var err error
			m.Doc, err = scanDoc(row, &rank, &f)
			m.Text, fill = float64(rank), append(fill, f)
			return m, err
		})
		if err == nil {
			rankFill(out, fill)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: search memory documents: %w", err)
	}
	return out, nil
}

// rankFill scales the Text of the fill-up matches (after the candidates)
// below the last candidate's, and makes every Text positive, keeping the
// order.
func rankFill(ms []docs.Match, fill []bool) {
	if first := slices.Index(fill, true); first > 0 && ms[first].Text > 0 && ms[first].Text >= ms[first-1].Text {
		scale := ms[first-1].Text / ms[first].Text / 2
		for i := first; i < len(ms); i++ {
			ms[i].Text *= scale
		}
	}
	for i := range ms {
		ms[i].Text = max(ms[i].Text, 1e-9)
	}
}

// lexeme is a query term as the search column holds it, and how many
// documents hold it.
type lexeme struct {
	text string
	docs int
}

// frequencies returns the lexemes of words, rarest first, and the number
// of documents.
func frequencies(ctx context.Context, q querier, words []string) (lexemes []lexeme, total int, err error) {
	rows, err := q.Query(ctx, `SELECT t.lexeme, coalesce(l.ndocs, 0)
		FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS t(lexeme)
		LEFT JOIN memory_lexemes l USING (lexeme)
		UNION ALL SELECT '', ndocs FROM memory_lexemes WHERE lexeme = ''`, strings.Join(words, " "))
	if err != nil {
		return nil, 0, err
	}
	var l lexeme
	_, err = pgx.ForEachRow(rows, []any{&l.text, &l.docs}, func() error {
		if l.text == "" {
			total = l.docs
		} else {
			lexemes = append(lexemes, l)
		}
		return nil
	})
	slices.SortFunc(lexemes, func(a, b lexeme) int { return cmp.Or(cmp.Compare(a.docs, b.docs), strings.Compare(a.text, b.text)) })
	return lexemes, total, err
}

// candidates is the tsquery choosing the documents a search ranks (see
// SearchDocuments), from the query's lexemes, rarest first.
func candidates(lexemes []lexeme, total int) string {
	var parts []string
	found, entries := 0.0, 0 // expected candidates, index entries read
	read := map[string]bool{}
	i := 0
	for ; i < len(lexemes) && found+float64(lexemes[i].docs) <= searchBudget; i++ {
		found += float64(lexemes[i].docs)
		entries += lexemes[i].docs
		read[lexemes[i].text] = true
		parts = append(parts, quoteLexeme(lexemes[i].text))
	}
	type pair struct {
		a, b lexeme
		docs float64 // estimated, as if the terms were independent
	}
	var pairs []pair
	rest := lexemes[i:min(len(lexemes), i+pairTerms)]
	for j, a := range rest {
		for _, b := range rest[j+1:] {
			pairs = append(pairs, pair{a, b, float64(a.docs) * float64(b.docs) / float64(max(total, 1))})
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.docs, b.docs) })
	fallback := ""
	for _, p := range pairs {
		more := 0
		for _, l := range []lexeme{p.a, p.b} {
			if !read[l.text] {
				more += l.docs
			}
		}
		if entries+more > indexBudget {
			continue
		}
		and := "(" + quoteLexeme(p.a.text) + " & " + quoteLexeme(p.b.text) + ")"
		if found+p.docs > searchBudget {
			if fallback == "" {
				fallback = and
			}
			continue
		}
		found, entries = found+p.docs, entries+more
		read[p.a.text], read[p.b.text] = true, true
		parts = append(parts, and)
	}
	switch {
	case len(parts) > 0:
		return strings.Join(parts, " | ")
	case fallback != "":
		// Every term is common: documents holding two of them, as many as
		// the budget, in no particular order.
		return fallback
	}
	// Documents holding the rarest term, as many as the budget, in no
	// particular order (when the term is common enough, the planner reads
	// the table until it has them).
	return quoteLexeme(lexemes[0].text)
}

// quoteLexeme quotes a lexeme for a tsquery's text.
func quoteLexeme(l string) string {
	return "'" + strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(l) + "'"
}

// queryWords are the query's terms as websearch_to_tsquery words: lower
// case runs of letters and digits. A term holding anything else is split
// there, so that no term can become an operator ("-", quotes); "or" is
// dropped for the same reason (it is a stop word anyway). Each word once.
func queryWords(terms []string) []string {
	var words []string
	for _, t := range terms {
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if w != "or" && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	return words
}

// scopeKeys are scopes as memory_docs.scope holds them: kind:key.
func scopeKeys(scopes []docs.Scope) []string {
	keys := make([]string, len(scopes))
	for i, sc := range scopes {
		keys[i] = string(sc.Kind) + ":" + sc.Key
	}
	return keys
}
