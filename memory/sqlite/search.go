package sqlite

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/opsgate/opsgate/memory/docs"
)

// SearchDocuments is full-text search over memory_fts: the query's words
// OR-ed, ranked by bm25 with the title weighing most (Text is -bm25, so
// larger is better), in the query's scopes and statuses.
func (s *Store) SearchDocuments(ctx context.Context, q docs.Query) ([]docs.Match, error) {
	words := queryWords(q.Terms)
	if len(words) == 0 || len(q.Scopes) == 0 {
		return nil, nil
	}
	scopes, err := scopesJSON(q.Scopes)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search memory: %w", err)
	}
	statuses := q.Statuses
	if len(statuses) == 0 {
		statuses = []docs.Status{docs.Active, docs.Draft}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	rows, err := s.r.query(ctx, `SELECT `+prefixed("d.", docCols)+`, -bm25(memory_fts, 4.0, 1.0, 2.0, 2.0) AS text
		FROM memory_fts JOIN memory_docs d ON d.seq = memory_fts.rowid
		WHERE memory_fts MATCH ?1
		AND (d.scope_kind, d.scope_key) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?2))
		AND d.status IN (SELECT value FROM json_each(?3))
		ORDER BY text DESC, d.seq LIMIT ?4`,
		matchExpr(words), scopes, statusesJSON(statuses), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search memory: %w", err)
	}
	defer rows.Close()
	var ms []docs.Match
	for rows.Next() {
		var m docs.Match
		if m.Doc, err = scanDoc(rows, &m.Text); err != nil {
			return nil, fmt.Errorf("sqlite: search memory: %w", err)
		}
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search memory: %w", err)
	}
	return ms, nil
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

// matchExpr is an FTS5 query matching any of words: each a quoted string.
func matchExpr(words []string) string {
	return `"` + strings.Join(words, `" OR "`) + `"`
}

// prefixed qualifies each column of cols with p.
func prefixed(p, cols string) string {
	fs := strings.Split(cols, ",")
	for i, f := range fs {
		fs[i] = p + strings.TrimSpace(f)
	}
	return strings.Join(fs, ", ")
}
