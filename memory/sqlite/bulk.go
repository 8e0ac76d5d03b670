package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// ImportDocuments creates every document of ds in one write transaction:
// the fast path for filling a store with many documents at once (the
// bench seeds 100,000 with it, where one SaveDocument each would be one
// commit each). Each is created as SaveDocument creates one: a new ID,
// Version 1, its history entry (note "imported") and its row of the
// full-text index; d.ID is ignored. The text of all is indexed after all
// are inserted, so that FTS5 writes its index in a few large segments
// (see indexText). A document's UpdatedAt, when set, is kept as its
// creation and update time (documents keep their age); zero is now. A
// scope and path already taken, in the store or earlier in ds, fails the
// whole import with docs.ErrPathTaken: nothing is saved.
func (s *Store) ImportDocuments(ctx context.Context, ds []docs.Document) error {
	now := time.Now()
	err := s.inTx(ctx, func(tx *txn) error {
		seqs := make([]int64, len(ds))
		created := make([]docs.Document, len(ds))
		for i, d := range ds {
			_, _, err := readDoc(ctx, tx, `WHERE scope_kind = ? AND scope_key = ? AND path = ?`, string(d.Scope.Kind), d.Scope.Key, d.Path)
			if err == nil {
				return fmt.Errorf("%s %s: %w", d.Scope, d.Path, docs.ErrPathTaken)
			}
			if !errors.Is(err, docs.ErrNotFound) {
				return err
			}
			at := d.UpdatedAt
			if at.IsZero() {
				at = now
			}
			d.ID = ""
			if created[i], seqs[i], err = insertDoc(ctx, tx, d, "imported", time.UnixMicro(at.UnixMicro()).UTC()); err != nil {
				return fmt.Errorf("%s %s: %w", d.Scope, d.Path, err)
			}
		}
		for i, d := range created {
			if err := indexText(ctx, tx, seqs[i], d); err != nil {
				return fmt.Errorf("%s %s: %w", d.Scope, d.Path, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: import %d memory documents: %w", len(ds), err)
	}
	return nil
}
