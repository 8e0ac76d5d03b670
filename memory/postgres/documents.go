package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/opsgate/opsgate/memory/docs"
)

var _ docs.Store = (*Store)(nil)

// docCols are the columns scanDoc reads, in order; versionCols are the
// same in memory_versions.
const (
	docCols     = `id, ` + docFields
	versionCols = `doc_id, ` + docFields
	docFields   = `scope_kind, scope_key, path, title, content, type, tags, entities,
	status, trust, source, author, version, sha256, created_at, updated_at`
)

// SaveDocument creates or updates a memory document (docs.Store). The
// current row is locked for the transaction, so concurrent saves of one
// document are applied one after the other, each checking ExpectSHA
// against what the one before left; concurrent creations at one scope and
// path create one document and update it.
func (s *Store) SaveDocument(ctx context.Context, d docs.Document, opt docs.Save) (docs.Document, error) {
	if err := validDoc(d); err != nil {
		return docs.Document{}, fmt.Errorf("postgres: save memory document %q: %w", d.Path, err)
	}
	at := opt.At
	if at.IsZero() {
		at = time.Now()
	}
	at = at.UTC().Truncate(time.Microsecond) // what is stored is what is returned
	d.Tags, d.Entities = normTags(d.Tags), normEntities(d.Entities)
	var saved docs.Document
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		saved, err = saveDoc(ctx, tx, d, opt, at)
		return err
	})
	if err != nil {
		return docs.Document{}, fmt.Errorf("postgres: save memory document %s %q: %w", d.Scope, d.Path, err)
	}
	return saved, nil
}

func saveDoc(ctx context.Context, tx pgx.Tx, d docs.Document, opt docs.Save, at time.Time) (docs.Document, error) {
	if d.ID != "" {
		cur, err := scanDoc(tx.QueryRow(ctx, `SELECT `+docCols+` FROM memory_docs WHERE id = $1 FOR UPDATE`, d.ID))
		if err != nil {
			return docs.Document{}, err
		}
		return updateDoc(ctx, tx, cur, d, opt, at)
	}
	// A creation racing another at the same scope and path loses the
	// INSERT (ON CONFLICT waits for the winner's commit), and the next
	// round's SELECT sees the winner's row: the save becomes an update.
	for range 3 {
		cur, err := scanDoc(tx.QueryRow(ctx, `SELECT `+docCols+` FROM memory_docs
			WHERE scope_kind = $1 AND scope_key = $2 AND path = $3 FOR UPDATE`, d.Scope.Kind, d.Scope.Key, d.Path))
		if err == nil {
			return updateDoc(ctx, tx, cur, d, opt, at)
		}
		if !errors.Is(err, docs.ErrNotFound) {
			return docs.Document{}, err
		}
		d.ID, d.Version, d.SHA256, d.CreatedAt, d.UpdatedAt = newDocID(), 1, docs.Hash(d.Content), at, at
		var lexemes []string
		err = tx.QueryRow(ctx, `INSERT INTO memory_docs (`+docCols+`, keywords)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
			ON CONFLICT (scope_kind, scope_key, path) DO NOTHING
			RETURNING tsvector_to_array(search)`, append(docArgs(d), keywords(d))...).Scan(&lexemes)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return docs.Document{}, err
		}
		if err := countLexemes(ctx, tx, nil, lexemes, 1); err != nil {
			return docs.Document{}, err
		}
		return d, appendVersion(ctx, tx, d, opt.Note, at)
	}
	return docs.Document{}, errors.New("the document was created and removed while being saved")
}

// countLexemes keeps memory_lexemes (the document frequencies search
// uses): a document's lexemes went from before to after, and added
// documents were added. One statement, in lexeme order, so that
// concurrent saves lock the rows they share in the same order.
func countLexemes(ctx context.Context, tx pgx.Tx, before, after []string, added int) error {
	slices.Sort(before)
	slices.Sort(after)
	var lexemes []string
	var deltas []int32
	if added != 0 {
		lexemes, deltas = append(lexemes, ""), append(deltas, int32(added))
	}
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case j == len(after) || i < len(before) && before[i] < after[j]:
			lexemes, deltas = append(lexemes, before[i]), append(deltas, -1)
			i++
		case i == len(before) || after[j] < before[i]:
			lexemes, deltas = append(lexemes, after[j]), append(deltas, 1)
			j++
		default:
			i, j = i+1, j+1
		}
	}
	if len(lexemes) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO memory_lexemes (lexeme, ndocs)
		SELECT * FROM unnest($1::text[], $2::int[]) AS d(lexeme, delta) ORDER BY lexeme
		ON CONFLICT (lexeme) DO UPDATE SET ndocs = memory_lexemes.ndocs + excluded.ndocs`, lexemes, deltas)
	return err
}

// updateDoc saves d over cur, the locked current version.
func updateDoc(ctx context.Context, tx pgx.Tx, cur, d docs.Document, opt docs.Save, at time.Time) (docs.Document, error) {
	if opt.ExpectSHA != "" && opt.ExpectSHA != cur.SHA256 {
		return docs.Document{}, &docs.ConflictError{Current: cur}
	}
	if docs.Same(cur, d) {
		return cur, nil
	}
	d.ID, d.Version, d.SHA256, d.CreatedAt, d.UpdatedAt = cur.ID, cur.Version+1, docs.Hash(d.Content), cur.CreatedAt, at
	// The statements of a WITH share a snapshot: old is the row before the
	// update.
	var before, after []string
	err := tx.QueryRow(ctx, `WITH old AS (SELECT tsvector_to_array(search) AS lexemes FROM memory_docs WHERE id = $1),
		new AS (UPDATE memory_docs SET scope_kind = $2, scope_key = $3, path = $4, title = $5,
			content = $6, type = $7, tags = $8, entities = $9, status = $10, trust = $11, source = $12, author = $13,
			version = $14, sha256 = $15, created_at = $16, updated_at = $17, keywords = $18
			WHERE id = $1 RETURNING tsvector_to_array(search) AS lexemes)
		SELECT old.lexemes, new.lexemes FROM old, new`, append(docArgs(d), keywords(d))...).Scan(&before, &after)
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return docs.Document{}, docs.ErrPathTaken
	}
	if err != nil {
		return docs.Document{}, err
	}
	if err := countLexemes(ctx, tx, before, after, 0); err != nil {
		return docs.Document{}, err
	}
	return d, appendVersion(ctx, tx, d, opt.Note, at)
}

func appendVersion(ctx context.Context, tx pgx.Tx, d docs.Document, note string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO memory_versions (`+versionCols+`, note, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		append(docArgs(d), note, at)...)
	return err
}

// docArgs are d's values for docCols.
func docArgs(d docs.Document) []any {
	return []any{d.ID, string(d.Scope.Kind), d.Scope.Key, d.Path, d.Title, d.Content, string(d.Type),
		nonNil(d.Tags), nonNilMap(d.Entities), string(d.Status), string(d.Trust), d.Source, d.Author,
		d.Version, d.SHA256, d.CreatedAt, d.UpdatedAt}
}

// Document returns a memory document by id (docs.Store).
func (s *Store) Document(ctx context.Context, id string) (docs.Document, error) {
	d, err := s.oneDoc(ctx, `SELECT `+docCols+` FROM memory_docs WHERE id = $1`, id)
	if err != nil {
		return docs.Document{}, fmt.Errorf("postgres: memory document %q: %w", id, err)
	}
	return d, nil
}

// DocumentAt returns the memory document at a scope's path (docs.Store).
func (s *Store) DocumentAt(ctx context.Context, scope docs.Scope, path string) (docs.Document, error) {
	d, err := s.oneDoc(ctx, `SELECT `+docCols+` FROM memory_docs
		WHERE scope_kind = $1 AND scope_key = $2 AND path = $3`, string(scope.Kind), scope.Key, path)
	if err != nil {
		return docs.Document{}, fmt.Errorf("postgres: memory document %s %q: %w", scope, path, err)
	}
	return d, nil
}

func (s *Store) oneDoc(ctx context.Context, sql string, args ...any) (docs.Document, error) {
	var d docs.Document
	err := s.read(ctx, func(q querier) error {
		var err error
		d, err = scanDoc(q.QueryRow(ctx, sql, args...))
		return err
	})
	return d, err
}

// Documents lists memory documents (docs.Store), ordered by scope kind,
// scope key and path as bytes, like SQLite.
func (s *Store) Documents(ctx context.Context, f docs.Filter) ([]docs.Document, error) {
	sql := `SELECT ` + docCols + ` FROM memory_docs WHERE true`
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if len(f.Scopes) > 0 {
		kinds, keys := scopeArrays(f.Scopes)
		sql += ` AND (scope_kind, scope_key) IN (SELECT * FROM unnest(` + arg(kinds) + `::text[], ` + arg(keys) + `::text[]))`
	}
	if len(f.Statuses) > 0 {
		sql += ` AND status = ANY(` + arg(statusArray(f.Statuses)) + `)`
	}
	if f.Trust != "" {
		sql += ` AND trust = ` + arg(string(f.Trust))
	}
	if f.Type != "" {
		sql += ` AND type = ` + arg(string(f.Type))
	}
	sql += ` ORDER BY scope_kind COLLATE "C", scope_key COLLATE "C", path COLLATE "C"`
	if f.Limit > 0 {
		sql += ` LIMIT ` + arg(f.Limit)
	}
	var out []docs.Document
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (docs.Document, error) { return scanDoc(row) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: memory documents: %w", err)
	}
	return out, nil
}

// History returns a memory document's versions, oldest first (docs.Store).
func (s *Store) History(ctx context.Context, id string) ([]docs.Version, error) {
	var out []docs.Version
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT `+versionCols+`, note, at FROM memory_versions WHERE doc_id = $1 ORDER BY version`, id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (docs.Version, error) {
			var v docs.Version
			var err error
			v.Doc, err = scanDoc(row, &v.Note, &v.At)
			v.At = v.At.UTC()
			return v, err
		})
		return err
	})
	if err == nil && len(out) == 0 {
		err = docs.ErrNotFound // every document has a first version
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: history of memory document %q: %w", id, err)
	}
	return out, nil
}

// scanDoc reads docCols and then into extra; no row is docs.ErrNotFound.
func scanDoc(row pgx.Row, extra ...any) (docs.Document, error) {
	var d docs.Document
	dest := append([]any{&d.ID, &d.Scope.Kind, &d.Scope.Key, &d.Path, &d.Title, &d.Content, &d.Type,
		&d.Tags, &d.Entities, &d.Status, &d.Trust, &d.Source, &d.Author, &d.Version, &d.SHA256,
		&d.CreatedAt, &d.UpdatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			err = docs.ErrNotFound
		}
		return docs.Document{}, err
	}
	d.Tags, d.Entities = normTags(d.Tags), normEntities(d.Entities)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

// validDoc rejects what the schema would store but no reader could use.
func validDoc(d docs.Document) error {
	switch d.Scope.Kind {
	case docs.Workspace:
		if d.Scope.Key != "" {
			return fmt.Errorf("the workspace scope has no key (got %q)", d.Scope.Key)
		}
	case docs.Channel, docs.User, docs.Conversation:
		if d.Scope.Key == "" {
			return fmt.Errorf("scope %s needs a key", d.Scope.Kind)
		}
	default:
		return fmt.Errorf("unknown scope kind %q", d.Scope.Kind)
	}
	switch {
	case d.Path == "":
		return errors.New("empty path")
	case !d.Type.Valid():
		return fmt.Errorf("unknown type %q", d.Type)
	case !d.Trust.Valid():
		return fmt.Errorf("unknown trust %q", d.Trust)
	case !d.Status.Valid():
		return fmt.Errorf("unknown status %q", d.Status)
	}
	return nil
}

// keywords is the text the search column weighs between title and
// content: tags and entity values, each hyphenated or dotted one also as
// its parts ("payments-api payments api").
func keywords(d docs.Document) string {
	var b strings.Builder
	add := func(v string) {
		b.WriteString(v)
		b.WriteByte(' ')
		if parts := strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '/' }); len(parts) > 1 {
			b.WriteString(strings.Join(parts, " "))
			b.WriteByte(' ')
		}
	}
	for _, t := range d.Tags {
		add(t)
	}
	for _, kind := range slices.Sorted(maps.Keys(d.Entities)) {
		for _, v := range d.Entities[kind] {
			add(v)
		}
	}
	return strings.TrimSpace(b.String())
}

// newDocID is 128 random bits as 32 hex characters.
func newDocID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// normTags and normEntities make empty nil, as a document read back has it.
func normTags(ts []string) []string {
	if len(ts) == 0 {
		return nil
	}
	return ts
}

func normEntities(m map[string][]string) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func nonNil(ts []string) []string {
	if ts == nil {
		return []string{}
	}
	return ts
}

func nonNilMap(m map[string][]string) map[string][]string {
	if m == nil {
		return map[string][]string{}
	}
	return m
}

// scopeArrays are scopes as two parallel arrays for unnest.
func scopeArrays(scopes []docs.Scope) (kinds, keys []string) {
	for _, sc := range scopes {
		kinds, keys = append(kinds, string(sc.Kind)), append(keys, sc.Key)
	}
	return kinds, keys
}

func statusArray(ss []docs.Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
