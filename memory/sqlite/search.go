package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/opsgate/opsgate/memory/docs"
)

// SearchDocuments is full-text search over memory_fts: the query's words
// OR-ed, ranked by bm25 with the title weighing most (Text is -bm25, so
// larger is better), in the query's scopes and statuses. Over many
// documents it ranks by the query's rarest words only (see planSearch).
func (s *Store) SearchDocuments(ctx context.Context, q docs.Query) ([]docs.Match, error) {
	words := queryWords(q.Terms)
	if len(words) == 0 || len(q.Scopes) == 0 {
		return nil, nil
	}
	p, err := s.planSearch(ctx, words)
	if err != nil || len(p.words) == 0 {
		return nil, wrapSearch(err)
	}
	scopes, err := scopesJSON(q.Scopes)
	if err != nil {
		return nil, wrapSearch(err)
	}
	st := q.Statuses
	if len(st) == 0 {
		st = []docs.Status{docs.Active, docs.Draft}
	}
	statuses := statusesJSON(st)
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	// Most matches are in scope (the workspace's): rank without the filter,
	// then filter the best few; only when too few of them pass, rank again
	// with the filter, which costs a lookup of every match.
	k := 2*limit + 16
	cands, err := s.rank(ctx, p, k)
	if err != nil {
		return nil, wrapSearch(err)
	}
	ms, err := s.matched(ctx, cands, scopes, statuses, limit)
	if err != nil {
		return nil, wrapSearch(err)
	}
	if len(ms) < limit && len(cands) == k {
		if ms, err = s.rankInScope(ctx, p, scopes, statuses, limit); err != nil {
			return nil, wrapSearch(err)
		}
	}
	return ms, nil
}

func wrapSearch(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlite: search memory: %w", err)
}

// candidate is a ranked match: its seq and Text.
type candidate struct {
	seq  int64
	text float64
}

// bm25 is the rank of a match: the title weighs four times the content,
// tags and entity values twice.
const bm25 = `-bm25(memory_fts, 4.0, 1.0, 2.0, 2.0)`

// The statements of rank and rankInScope, by bm25 or newest first. The
// MATCH argument is an expression rather than a bare parameter, and so is
// the seq bound: FTS5 looks at a bare parameter's value when SQLite plans
// the statement, so SQLite would prepare it again for every query.
const (
	rankByText = `SELECT rowid, ` + bm25 + ` AS text FROM memory_fts
		WHERE memory_fts MATCH (?1 || '') AND rowid > (?2 + 0) ORDER BY text DESC, rowid LIMIT ?3`
	rankByAge = `SELECT rowid, ?4 FROM memory_fts
		WHERE memory_fts MATCH (?1 || '') AND rowid > (?2 + 0) ORDER BY rowid DESC LIMIT ?3`
)

// rank returns the best k matches of plan p, unfiltered.
func (s *Store) rank(ctx context.Context, p searchPlan, k int) ([]candidate, error) {
	query, args := rankByText, []any{matchExpr(p.words), p.after, k}
	if p.recent {
		query, args = rankByAge, append(args, p.text)
	}
	rows, err := s.r.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cs []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.seq, &c.text); err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, rows.Err()
}

// matched returns the best limit candidates in scopes and statuses, best
// first. The filter reads memory_docs_search (the unary + keeps SQLite
// from seeking it once per scope and status); only the documents returned
// are read whole.
func (s *Store) matched(ctx context.Context, cands []candidate, scopes, statuses string, limit int) ([]docs.Match, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	seqs := make([]int64, len(cands))
	for i, c := range cands {
		seqs[i] = c.seq
	}
	ids, err := json.Marshal(seqs)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.query(ctx, `SELECT `+prefixed("d.", docCols)+`, m.i FROM (
			SELECT j.key AS i, j.value AS seq FROM json_each(?1) j
			JOIN memory_docs f INDEXED BY memory_docs_search ON f.seq = j.value
			WHERE (+f.scope_kind, +f.scope_key) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))
			AND +f.status IN (SELECT value FROM json_each(?3))
			ORDER BY j.key LIMIT ?4
		) m JOIN memory_docs d ON d.seq = m.seq
		ORDER BY m.i`, string(ids), scopes, statuses, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []docs.Match
	for rows.Next() {
		var i int
		d, err := scanDoc(rows, &i)
		if err != nil {
			return nil, err
		}
		ms = append(ms, docs.Match{Doc: d, Text: cands[i].text})
	}
	return ms, rows.Err()
}

// rankInScope is rank and matched at once: every match is looked up in
// memory_docs_search, and only the best limit are read whole.
func (s *Store) rankInScope(ctx context.Context, p searchPlan, scopes, statuses string, limit int) ([]docs.Match, error) {
	text, order := bm25, `text DESC, seq`
	args := []any{matchExpr(p.words), scopes, statuses, limit, p.after}
	if p.recent {
		text, order, args = `?6`, `seq DESC`, append(args, p.text)
	}
	rows, err := s.r.query(ctx, `SELECT `+prefixed("d.", docCols)+`, m.text FROM (
			SELECT memory_fts.rowid AS seq, `+text+` AS text
			FROM memory_fts JOIN memory_docs f INDEXED BY memory_docs_search ON f.seq = memory_fts.rowid
			WHERE memory_fts MATCH (?1 || '') AND memory_fts.rowid > (?5 + 0)
			AND (+f.scope_kind, +f.scope_key) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))
			AND +f.status IN (SELECT value FROM json_each(?3))
			ORDER BY `+order+` LIMIT ?4
		) m JOIN memory_docs d ON d.seq = m.seq
		ORDER BY m.`+strings.ReplaceAll(order, ", ", ", m."), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []docs.Match
	for rows.Next() {
		var m docs.Match
		if m.Doc, err = scanDoc(rows, &m.Text); err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

// queryWords splits terms into words as unicode61 does (runs of letters
// and digits), lower case, each once. Anything else in a term is a
// separator, never query syntax.
func queryWords(terms []string) []string {
	seen := map[string]bool{}
	var words []string
	for _, t := range terms {
		for _, w := range strings.FieldsFunc(strings.ToLower(t), notWordRune) {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	return words
}

func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Co, r)
}

// quote makes each word an FTS5 string, a word and never an operator.
func quote(words []string) []string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = `"` + w + `"`
	}
	return q
}

// matchExpr is an FTS5 query matching any of words.
func matchExpr(words []string) string {
	return strings.Join(quote(words), " OR ")
}

// prefixed qualifies each column of cols with p.
func prefixed(p, cols string) string {
	fs := strings.Split(cols, ",")
	for i, f := range fs {
		fs[i] = p + strings.TrimSpace(f)
	}
	return strings.Join(fs, ", ")
}
