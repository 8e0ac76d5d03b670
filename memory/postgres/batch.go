package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

// Apply makes the writes of b in one transaction, in the order of
// core.Batch's fields: one commit for one step of a run.
func (s *Store) Apply(ctx context.Context, b core.Batch) error {
	if b.Empty() {
		return nil
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if c := b.Conversation; c != nil {
			if err := updateConversation(ctx, tx, *c); err != nil {
				return fmt.Errorf("update conversation %q: %w", c.Key, err)
			}
		}
		if r := b.CreateRun; r != nil {
			if err := createRun(ctx, tx, *r); err != nil {
				return fmt.Errorf("create run %q: %w", r.ID, err)
			}
		}
		if len(b.Messages) > 0 {
			if err := appendMessages(ctx, tx, b.ConvKey, b.Messages); err != nil {
				return fmt.Errorf("append messages to %q: %w", b.ConvKey, err)
			}
		}
		for _, in := range b.InboundDone {
			if err := markInboundDone(ctx, tx, in.ConvKey, in.MessageID); err != nil {
				return fmt.Errorf("mark inbound %q in %q done: %w", in.MessageID, in.ConvKey, err)
			}
		}
		if len(b.Approvals) > 0 {
			if err := createApprovals(ctx, tx, b.Approvals); err != nil {
				return fmt.Errorf("create approvals: %w", err)
			}
		}
		if cp := b.Checkpoint; cp != nil {
			if err := saveCheckpoint(ctx, tx, *cp); err != nil {
				return fmt.Errorf("save checkpoint of %q: %w", cp.RunID, err)
			}
		}
		for _, e := range b.Audit {
			if err := appendAudit(ctx, tx, e); err != nil {
				return fmt.Errorf("append audit %s: %w", e.Kind, err)
			}
		}
		if r := b.UpdateRun; r != nil {
			if err := updateRun(ctx, tx, *r); err != nil {
				return fmt.Errorf("update run %q: %w", r.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: apply batch: %w", err)
	}
	return nil
}
