// Package batch applies a core.Batch in the order its fields are declared,
// the one order both stores must keep: each store supplies the writes of
// one transaction (Writer), and this package sequences and names them.
package batch

import (
	"fmt"

	"github.com/opsgate/opsgate/core"
)

// Writer makes each kind of write inside one transaction.
type Writer interface {
	UpdateConversation(c core.Conversation) error
	CreateRun(r core.Run) error
	AppendMessages(convKey string, msgs []core.Message) error
	MarkInboundDone(convKey, messageID string) error
	CreateApprovals(as []core.Approval) error
	// SetPreview replaces an existing approval's preview; an unknown id
	// is core.ErrNotFound.
	SetPreview(p core.ApprovalPreview) error
	SaveCheckpoint(cp core.Checkpoint) error
	AppendAudit(e core.AuditEntry) error
	UpdateRun(r core.Run) error
	// ReserveSeq reserves n event sequence numbers of the conversation
	// and returns the last.
	ReserveSeq(convKey string, n int64) (int64, error)
}

// Apply makes the writes of b with w, in the order of core.Batch's fields;
// the first error stops it, naming what failed.
func Apply(w Writer, b core.Batch) error {
	if c := b.Conversation; c != nil {
		if err := w.UpdateConversation(*c); err != nil {
			return fmt.Errorf("update conversation %q: %w", c.Key, err)
		}
	}
	if r := b.CreateRun; r != nil {
		if err := w.CreateRun(*r); err != nil {
			return fmt.Errorf("create run %q: %w", r.ID, err)
		}
	}
	if len(b.Messages) > 0 {
		if err := w.AppendMessages(b.ConvKey, b.Messages); err != nil {
			return fmt.Errorf("append messages to %q: %w", b.ConvKey, err)
		}
	}
	for _, in := range b.InboundDone {
		if err := w.MarkInboundDone(in.ConvKey, in.MessageID); err != nil {
			return fmt.Errorf("mark inbound %q in %q done: %w", in.MessageID, in.ConvKey, err)
		}
	}
	if len(b.Approvals) > 0 {
		if err := w.CreateApprovals(b.Approvals); err != nil {
			return fmt.Errorf("create approvals: %w", err)
		}
	}
	for _, p := range b.Previews {
		if err := w.SetPreview(p); err != nil {
			return fmt.Errorf("set the preview of approval %q: %w", p.ApprovalID, err)
		}
	}
	if cp := b.Checkpoint; cp != nil {
		if err := w.SaveCheckpoint(*cp); err != nil {
			return fmt.Errorf("save checkpoint of %q: %w", cp.RunID, err)
		}
	}
	for _, e := range b.Audit {
		if err := w.AppendAudit(e); err != nil {
			return fmt.Errorf("append audit %s: %w", e.Kind, err)
		}
	}
	if r := b.UpdateRun; r != nil {
		if err := w.UpdateRun(*r); err != nil {
			return fmt.Errorf("update run %q: %w", r.ID, err)
		}
	}
	if s := b.Seq; s != nil {
		last, err := w.ReserveSeq(s.ConvKey, s.N)
		if err != nil {
			return fmt.Errorf("reserve event sequence numbers of %q: %w", s.ConvKey, err)
		}
		s.Last = last
	}
	return nil
}
