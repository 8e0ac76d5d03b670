package sqlite

import (
	"context"
	"fmt"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/internal/batch"
)

// Apply makes the writes of b in one transaction, in the order of
// core.Batch's fields, so they cost one commit (one fsync) together.
func (s *Store) Apply(ctx context.Context, b core.Batch) error {
	if b.Empty() {
		return nil
	}
	if err := s.inTx(ctx, func(tx *txn) error { return batch.Apply(txWriter{ctx, tx}, b) }); err != nil {
		return fmt.Errorf("sqlite: apply batch: %w", err)
	}
	return nil
}

// txWriter is batch.Writer inside one transaction.
type txWriter struct {
	ctx context.Context
	tx  *txn
}

func (w txWriter) UpdateConversation(c core.Conversation) error {
	return updateConversation(w.ctx, w.tx, c)
}
func (w txWriter) CreateRun(r core.Run) error { return createRun(w.ctx, w.tx, r) }
func (w txWriter) AppendMessages(key string, msgs []core.Message) error {
	return appendMessages(w.ctx, w.tx, key, msgs)
}
func (w txWriter) MarkInboundDone(conv, id string) error {
	return markInboundDone(w.ctx, w.tx, conv, id)
}
func (w txWriter) CreateApprovals(as []core.Approval) error {
	return createApprovals(w.ctx, w.tx, as)
}
func (w txWriter) SetPreview(p core.ApprovalPreview) error { return setPreview(w.ctx, w.tx, p) }
func (w txWriter) SaveCheckpoint(cp core.Checkpoint) error { return saveCheckpoint(w.ctx, w.tx, cp) }
func (w txWriter) AppendAudit(e core.AuditEntry) error     { return appendAudit(w.ctx, w.tx, e) }
func (w txWriter) UpdateRun(r core.Run) error              { return updateRun(w.ctx, w.tx, r) }
func (w txWriter) ReserveSeq(convKey string, n int64) (int64, error) {
	return reserveSeq(w.ctx, w.tx, convKey, n)
}
