package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/opsgate/opsgate/memory/docs"
)

// ImportDocuments creates every document of ds in one transaction: the
// fast path for filling a store with many documents at once (the bench
// seeds 100,000 with it, where SaveDocument takes a transaction, a lock
// and a lexeme count update each). The documents and their first
// versions (note "imported") are written with COPY, the lexeme counts
// that search relies on are updated once, and the table is analysed
// afterwards so that the planner knows its new size. Each is created as
// SaveDocument creates one: a new ID, Version 1; d.ID is ignored. A
// document's UpdatedAt, when set, is kept as its creation and update
// time (documents keep their age); zero is now. A scope and path already
// taken, in the store or earlier in ds, fails the whole import with
// docs.ErrPathTaken: nothing is saved.
func (s *Store) ImportDocuments(ctx context.Context, ds []docs.Document) error {
	if len(ds) == 0 {
		return nil
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	rows := make([][]any, len(ds))
	versions := make([][]any, len(ds))
	ids := make([]string, len(ds))
	for i, d := range ds {
		if err := validDoc(d); err != nil {
			return fmt.Errorf("postgres: import memory document %q: %w", d.Path, err)
		}
		at := d.UpdatedAt.UTC().Truncate(time.Microsecond)
		if d.UpdatedAt.IsZero() {
			at = now
		}
		d.Tags, d.Entities = normTags(d.Tags), normEntities(d.Entities)
		d.ID, d.Version, d.SHA256, d.CreatedAt, d.UpdatedAt = newDocID(), 1, docs.Hash(d.Content), at, at
		ids[i] = d.ID
		rows[i] = append(docArgs(d), keywords(d))
		versions[i] = append(docArgs(d), "imported", at)
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"memory_docs"}, append(columns(docCols), "keywords"), pgx.CopyFromRows(rows)); err != nil {
			if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "23505" {
				return fmt.Errorf("%s: %w", pgErr.Detail, docs.ErrPathTaken)
			}
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"memory_versions"}, append(columns(versionCols), "note", "at"), pgx.CopyFromRows(versions)); err != nil {
			return err
		}
		// The lexeme counts, as countLexemes keeps them: each lexeme of
		// the new documents, and the empty lexeme for the document count.
		_, err := tx.Exec(ctx, `INSERT INTO memory_lexemes (lexeme, ndocs)
			SELECT lexeme, count(*) FROM memory_docs, unnest(tsvector_to_array(search)) AS lexeme
				WHERE id = ANY($1) GROUP BY lexeme
			UNION ALL SELECT '', $2
			ORDER BY 1
			ON CONFLICT (lexeme) DO UPDATE SET ndocs = memory_lexemes.ndocs + excluded.ndocs`, ids, len(ds))
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: import %d memory documents: %w", len(ds), err)
	}
	// As autovacuum would, later: the planner's statistics for the new
	// rows. A failure only leaves the plans to autovacuum.
	_, _ = s.pool.Exec(ctx, `ANALYZE memory_docs`)
	return nil
}

// columns splits a column list.
func columns(cols string) []string {
	var out []string
	for _, c := range strings.Split(cols, ",") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}
