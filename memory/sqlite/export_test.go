package sqlite

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// CreateDocumentsInOneTx creates ds, new documents at distinct paths, as
// SaveDocument would one by one, in a single write transaction: a
// benchmark seeds 100,000 documents with one commit. Their text is
// indexed after all of them are inserted, so that FTS5 writes its index
// in large segments rather than one per document (see indexText), and the
// writer's page cache is made large enough (for good: this is for a
// benchmark's store) that the transaction writes each page once.
func (s *Store) CreateDocumentsInOneTx(ctx context.Context, ds []docs.Document, note string) error {
	at := time.UnixMicro(time.Now().UnixMicro()).UTC()
	return s.inTx(ctx, func(tx *txn) error {
		if _, err := tx.tx.ExecContext(ctx, `PRAGMA cache_size = -262144`); err != nil { // 256 MiB
			return err
		}
		seqs := make([]int64, len(ds))
		for i, d := range ds {
			var err error
			if ds[i], seqs[i], err = insertDoc(ctx, tx, d, note, at); err != nil {
				return err
			}
		}
		for i, d := range ds {
			if err := indexText(ctx, tx, seqs[i], d); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetSearchBudgets makes SearchDocuments plan with the given budgets (see
// searchplan.go) until t ends, so that a test needs dozens of documents
// rather than tens of thousands. Tests that call it must not run in
// parallel.
func SetSearchBudgets(t testing.TB, rank, idf float64) {
	oldRank, oldIDF := rankBudget, idfBudget
	rankBudget, idfBudget = rank, idf
	t.Cleanup(func() { rankBudget, idfBudget = oldRank, oldIDF })
}

// SeeEventsTx calls f inside each AppendEvents transaction.
func (s *Store) SeeEventsTx(f func(ctx context.Context, tx *sql.Tx)) { s.lazyTxHook = f }

// WriterSynchronous reads PRAGMA synchronous on the writer's connection
// (1 NORMAL, 2 FULL).
func (s *Store) WriterSynchronous(ctx context.Context) (int, error) {
	var n int
	err := s.w.db.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&n)
	return n, err
}
