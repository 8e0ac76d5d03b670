package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

var _ docs.Store = (*Store)(nil)

// docCols are the columns scanDoc reads, in order.
const docCols = `id, scope_kind, scope_key, path, title, content, type, tags, entities,
	status, trust, source, author, version, sha256, created_at, updated_at`

// SaveDocument creates or updates a document in one write transaction,
// with its history entry and its row of the full-text index (see
// docs.Store for the rules).
func (s *Store) SaveDocument(ctx context.Context, d docs.Document, opt docs.Save) (docs.Document, error) {
	var out docs.Document
	err := s.inTx(ctx, func(tx *txn) error {
		var err error
		out, err = saveDocument(ctx, tx, d, opt)
		return err
	})
	if err != nil {
		return docs.Document{}, fmt.Errorf("sqlite: save memory document %s %s: %w", d.Scope, d.Path, err)
	}
	return out, nil
}

// saveDocument is SaveDocument inside tx.
func saveDocument(ctx context.Context, tx *txn, d docs.Document, opt docs.Save) (docs.Document, error) {
	at := opt.At
	if at.IsZero() {
		at = time.Now()
	}
	at = time.UnixMicro(at.UnixMicro()).UTC() // what is stored is what is returned
	var cur docs.Document
	var seq int64
	var err error
	if d.ID != "" {
		cur, seq, err = readDoc(ctx, tx, `WHERE id = ?`, d.ID)
	} else {
		cur, seq, err = readDoc(ctx, tx, `WHERE scope_kind = ? AND scope_key = ? AND path = ?`, string(d.Scope.Kind), d.Scope.Key, d.Path)
		if errors.Is(err, docs.ErrNotFound) {
			return createDoc(ctx, tx, d, opt.Note, at)
		}
	}
	if err != nil {
		return docs.Document{}, err
	}
	if opt.ExpectSHA != "" && opt.ExpectSHA != cur.SHA256 {
		return docs.Document{}, &docs.ConflictError{Current: cur}
	}
	if docs.Same(cur, d) {
		return cur, nil
	}
	if d.Scope != cur.Scope || d.Path != cur.Path {
		var n int
		if err := tx.queryRow(ctx, `SELECT count(*) FROM memory_docs WHERE scope_kind = ? AND scope_key = ? AND path = ?`,
			string(d.Scope.Kind), d.Scope.Key, d.Path).Scan(&n); err != nil {
			return docs.Document{}, err
		}
		if n > 0 {
			return docs.Document{}, docs.ErrPathTaken
		}
	}
	d.ID, d.Version, d.SHA256 = cur.ID, cur.Version+1, docs.Hash(d.Content)
	d.CreatedAt, d.UpdatedAt = cur.CreatedAt, at
	v, err := docValues(d)
	if err != nil {
		return docs.Document{}, err
	}
	if _, err := tx.exec(ctx, `UPDATE memory_docs SET (`+docCols+`) =
		(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE seq = ?`, append(v, seq)...); err != nil {
		return docs.Document{}, err
	}
	if err := appendVersion(ctx, tx, d, opt.Note, at); err != nil {
		return docs.Document{}, err
	}
	if _, err := tx.exec(ctx, `DELETE FROM memory_fts WHERE rowid = ?`, seq); err != nil {
		return docs.Document{}, err
	}
	return d, indexText(ctx, tx, seq, d)
}

// createDoc creates d as a new document: its row, its history entry and
// its text in the index.
func createDoc(ctx context.Context, tx *txn, d docs.Document, note string, at time.Time) (docs.Document, error) {
	d, seq, err := insertDoc(ctx, tx, d, note, at)
	if err != nil {
		return docs.Document{}, err
	}
	return d, indexText(ctx, tx, seq, d)
}

// insertDoc inserts d as a new document with its history entry, and
// returns it with its seq; the caller indexes its text (indexText). Many
// documents are created fastest by inserting them all, then indexing
// them all (see indexText).
func insertDoc(ctx context.Context, tx *txn, d docs.Document, note string, at time.Time) (docs.Document, int64, error) {
	d.ID, d.Version, d.SHA256 = newDocID(), 1, docs.Hash(d.Content)
	d.CreatedAt, d.UpdatedAt = at, at
	v, err := docValues(d)
	if err != nil {
		return docs.Document{}, 0, err
	}
	res, err := tx.exec(ctx, `INSERT INTO memory_docs (`+docCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, v...)
	if err != nil {
		return docs.Document{}, 0, err
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return docs.Document{}, 0, err
	}
	return d, seq, appendVersion(ctx, tx, d, note, at)
}

// appendVersion adds version d to the history.
func appendVersion(ctx context.Context, tx *txn, d docs.Document, note string, at time.Time) error {
	snap, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = tx.exec(ctx, `INSERT INTO memory_versions (doc_id, version, note, at, doc) VALUES (?, ?, ?, ?, ?)`,
		d.ID, d.Version, note, at.UnixMicro(), string(snap))
	return err
}

// indexText adds d's text to the full-text index as row seq. FTS5 gathers
// the rows of a transaction in memory, but writes them out at every
// statement that opens a savepoint, as an INSERT into memory_docs or
// memory_versions does: indexing 100,000 documents after inserting them
// all writes the index in a few large segments instead of 100,000 small
// ones to merge (several times faster).
func indexText(ctx context.Context, tx *txn, seq int64, d docs.Document) error {
	_, err := tx.exec(ctx, `INSERT INTO memory_fts (rowid, title, content, tags, entities) VALUES (?, ?, ?, ?, ?)`,
		seq, d.Title, d.Content, strings.Join(d.Tags, " "), entityText(d.Entities))
	return err
}

// entityText is the entity values of a document as the index sees them:
// space separated, by kind.
func entityText(es map[string][]string) string {
	kinds := make([]string, 0, len(es))
	for k := range es {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var b strings.Builder
	for _, k := range kinds {
		for _, v := range es[k] {
			b.WriteString(v)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// docValues are d's values for docCols.
func docValues(d docs.Document) ([]any, error) {
	tags, err := json.Marshal(nonNil(d.Tags))
	if err != nil {
		return nil, err
	}
	ents := d.Entities
	if ents == nil {
		ents = map[string][]string{}
	}
	entities, err := json.Marshal(ents)
	if err != nil {
		return nil, err
	}
	source, err := json.Marshal(d.Source)
	if err != nil {
		return nil, err
	}
	return []any{d.ID, string(d.Scope.Kind), d.Scope.Key, d.Path, d.Title, d.Content, string(d.Type),
		string(tags), string(entities), string(d.Status), string(d.Trust), string(source), d.Author,
		d.Version, d.SHA256, d.CreatedAt.UnixMicro(), d.UpdatedAt.UnixMicro()}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newDocID returns 128 random bits as 32 hex characters.
func newDocID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("sqlite: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// readDoc reads the document selected by where (with args), and its seq;
// docs.ErrNotFound when there is none.
func readDoc(ctx context.Context, q queryer, where string, args ...any) (docs.Document, int64, error) {
	var seq int64
	d, err := scanDoc(q.queryRow(ctx, `SELECT `+docCols+`, seq FROM memory_docs `+where, args...), &seq)
	if errors.Is(err, sql.ErrNoRows) {
		err = docs.ErrNotFound
	}
	return d, seq, err
}

// scanDoc scans docCols, then extra.
func scanDoc(r scanner, extra ...any) (docs.Document, error) {
	var d docs.Document
	var tags, entities, source string
	var created, updated int64
	dest := append([]any{&d.ID, &d.Scope.Kind, &d.Scope.Key, &d.Path, &d.Title, &d.Content, &d.Type,
		&tags, &entities, &d.Status, &d.Trust, &source, &d.Author, &d.Version, &d.SHA256, &created, &updated}, extra...)
	if err := r.Scan(dest...); err != nil {
		return docs.Document{}, err
	}
	if err := json.Unmarshal([]byte(tags), &d.Tags); err != nil {
		return docs.Document{}, fmt.Errorf("memory document %s: tags: %w", d.ID, err)
	}
	if err := json.Unmarshal([]byte(entities), &d.Entities); err != nil {
		return docs.Document{}, fmt.Errorf("memory document %s: entities: %w", d.ID, err)
	}
	if err := json.Unmarshal([]byte(source), &d.Source); err != nil {
		return docs.Document{}, fmt.Errorf("memory document %s: source: %w", d.ID, err)
	}
	if len(d.Tags) == 0 {
		d.Tags = nil
	}
	if len(d.Entities) == 0 {
		d.Entities = nil
	}
	d.CreatedAt, d.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return d, nil
}

// Document returns document id, or an error wrapping docs.ErrNotFound.
func (s *Store) Document(ctx context.Context, id string) (docs.Document, error) {
	d, _, err := readDoc(ctx, s.r, `WHERE id = ?`, id)
	if err != nil {
		return docs.Document{}, fmt.Errorf("sqlite: memory document %s: %w", id, err)
	}
	return d, nil
}

// DocumentAt returns the document at scope's path, or an error wrapping
// docs.ErrNotFound.
func (s *Store) DocumentAt(ctx context.Context, scope docs.Scope, path string) (docs.Document, error) {
	d, _, err := readDoc(ctx, s.r, `WHERE scope_kind = ? AND scope_key = ? AND path = ?`, string(scope.Kind), scope.Key, path)
	if err != nil {
		return docs.Document{}, fmt.Errorf("sqlite: memory document %s %s: %w", scope, path, err)
	}
	return d, nil
}

// Documents lists the documents matching f in byte order of scope kind,
// scope key and path. The filter's lists are passed as JSON, so that one
// prepared statement serves every filter.
func (s *Store) Documents(ctx context.Context, f docs.Filter) ([]docs.Document, error) {
	scopes, err := scopesJSON(f.Scopes)
	if err != nil {
		return nil, fmt.Errorf("sqlite: memory documents: %w", err)
	}
	statuses := statusesJSON(f.Statuses)
	limit := f.Limit
	if limit <= 0 {
		limit = -1 // no limit
	}
	rows, err := s.r.query(ctx, `SELECT `+docCols+` FROM memory_docs
		WHERE (?1 = '[]' OR (scope_kind, scope_key) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?1)))
		AND (?2 = '[]' OR status IN (SELECT value FROM json_each(?2)))
		AND (?3 = '' OR trust = ?3) AND (?4 = '' OR type = ?4)
		ORDER BY scope_kind, scope_key, path LIMIT ?5`,
		scopes, statuses, string(f.Trust), string(f.Type), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: memory documents: %w", err)
	}
	defer rows.Close()
	var ds []docs.Document
	for rows.Next() {
		d, err := scanDoc(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: memory documents: %w", err)
		}
		ds = append(ds, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: memory documents: %w", err)
	}
	return ds, nil
}

// scopesJSON is scopes as a JSON array of [kind, key] pairs.
func scopesJSON(scopes []docs.Scope) (string, error) {
	pairs := make([][2]string, len(scopes))
	for i, sc := range scopes {
		pairs[i] = [2]string{string(sc.Kind), sc.Key}
	}
	b, err := json.Marshal(pairs)
	return string(b), err
}

// statusesJSON is statuses as a JSON array.
func statusesJSON(statuses []docs.Status) string {
	b, _ := json.Marshal(statuses) // strings cannot fail
	if len(statuses) == 0 {
		return "[]"
	}
	return string(b)
}

// History returns document id's versions, oldest first.
func (s *Store) History(ctx context.Context, id string) ([]docs.Version, error) {
	rows, err := s.r.query(ctx, `SELECT note, at, doc FROM memory_versions WHERE doc_id = ? ORDER BY version`, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: memory history %s: %w", id, err)
	}
	defer rows.Close()
	var vs []docs.Version
	for rows.Next() {
		var v docs.Version
		var at int64
		var snap string
		if err := rows.Scan(&v.Note, &at, &snap); err != nil {
			return nil, fmt.Errorf("sqlite: memory history %s: %w", id, err)
		}
		if err := json.Unmarshal([]byte(snap), &v.Doc); err != nil {
			return nil, fmt.Errorf("sqlite: memory history %s: version %d: %w", id, len(vs)+1, err)
		}
		v.At = time.UnixMicro(at).UTC()
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: memory history %s: %w", id, err)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("sqlite: memory history %s: %w", id, docs.ErrNotFound)
	}
	return vs, nil
}
