package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/internal/codec"
)

// approvalCols are the columns scanApproval reads, in order.
const approvalCols = `id, run_id, conv_key, call_id, toolset, tool, arguments, action_hash, risk,
	requester_id, requester_name, status, decided_by_id, decided_by_name, reason, created_at, expires_at, decided_at, verdict, preview`

func createApprovals(ctx context.Context, tx *txn, as []core.Approval) error {
	stmt, err := tx.stmt(ctx, `INSERT INTO approvals (`+approvalCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, a := range as {
		verdict, err := codec.EncodeVerdict(a.Verdict)
		if err != nil {
			return fmt.Errorf("approval %q: %w", a.ID, err)
		}
		preview, err := codec.EncodePreview(a.Preview)
		if err != nil {
			return fmt.Errorf("approval %q: %w", a.ID, err)
		}
		_, err = stmt.ExecContext(ctx, a.ID, a.RunID, a.ConvKey, a.CallID, a.Toolset, a.Tool, string(a.Arguments),
			a.ActionHash, string(a.Risk), a.Requester.ID, a.Requester.Name, string(a.Status),
			a.DecidedBy.ID, a.DecidedBy.Name, a.Reason, micros(a.CreatedAt), micros(a.ExpiresAt), micros(a.DecidedAt), verdict, preview)
		if err != nil {
			return fmt.Errorf("approval %q: %w", a.ID, err)
		}
	}
	return nil
}

// Approval returns approval id, or an error wrapping core.ErrNotFound.
func (s *Store) Approval(ctx context.Context, id string) (core.Approval, error) {
	a, err := scanApproval(s.r.queryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if err == nil {
		a.Votes, err = s.votes(ctx, id)
	}
	if err != nil {
		return core.Approval{}, fmt.Errorf("sqlite: approval %q: %w", id, err)
	}
	return a, nil
}

// AddVote records v on a pending approval; the UNIQUE (approval_id,
// person) constraint makes a person's vote one-shot even between processes.
func (s *Store) AddVote(ctx context.Context, id string, v core.Vote) (core.Approval, error) {
	err := s.inTx(ctx, func(tx *txn) error {
		var status string
		if err := tx.queryRow(ctx, `SELECT status FROM approvals WHERE id = ?`, id).Scan(&status); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return core.ErrNotFound
			}
			return err
		}
		if status != string(core.ApprovalPending) {
			return core.ErrAlreadyDecided
		}
		res, err := tx.exec(ctx, `INSERT INTO approval_votes (approval_id, person, actor_id, actor_name, approve, reason, at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (approval_id, person) DO NOTHING`,
			id, v.Person, v.Actor.ID, v.Actor.Name, v.Approve, v.Reason, micros(v.At))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmpErr(err, core.ErrAlreadyVoted)
		}
		return nil
	})
	if err != nil && !errors.Is(err, core.ErrAlreadyVoted) && !errors.Is(err, core.ErrAlreadyDecided) {
		return core.Approval{}, fmt.Errorf("sqlite: vote on approval %q: %w", id, err)
	}
	a, gerr := s.Approval(ctx, id)
	if gerr != nil {
		return core.Approval{}, gerr
	}
	if err != nil {
		return a, fmt.Errorf("sqlite: vote on approval %q: %w", id, err)
	}
	return a, nil
}

// cmpErr is err, or fallback when err is nil.
func cmpErr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

// votes returns the votes on approval id, oldest first.
func (s *Store) votes(ctx context.Context, id string) ([]core.Vote, error) {
	rows, err := s.r.query(ctx, `SELECT person, actor_id, actor_name, approve, reason, at
		FROM approval_votes WHERE approval_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var vs []core.Vote
	for rows.Next() {
		var v core.Vote
		var at sql.NullInt64
		if err := rows.Scan(&v.Person, &v.Actor.ID, &v.Actor.Name, &v.Approve, &v.Reason, &at); err != nil {
			return nil, err
		}
		v.At = fromMicros(at)
		vs = append(vs, v)
	}
	return vs, rows.Err()
}

// Approvals returns the approvals of runID in creation order.
func (s *Store) Approvals(ctx context.Context, runID string) ([]core.Approval, error) {
	as, err := s.approvals(ctx, `WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: approvals of run %q: %w", runID, err)
	}
	return as, nil
}

// PendingApprovals returns every approval still pending, across all
// conversations, oldest first.
func (s *Store) PendingApprovals(ctx context.Context) ([]core.Approval, error) {
	as, err := s.approvals(ctx, `WHERE status = 'pending' ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: pending approvals: %w", err)
	}
	return as, nil
}

// ExpiredApprovals returns the pending approvals that expired before now,
// the longest expired first.
func (s *Store) ExpiredApprovals(ctx context.Context, now time.Time) ([]core.Approval, error) {
	as, err := s.approvals(ctx, `WHERE status = 'pending' AND expires_at < ? ORDER BY expires_at, seq`, now.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("sqlite: expired approvals: %w", err)
	}
	return as, nil
}

// PendingSummary counts the pending approvals and finds the oldest (the
// partial index approvals_pending covers them).
func (s *Store) PendingSummary(ctx context.Context) (core.PendingSummary, error) {
	var n int
	var oldest sql.NullInt64
	err := s.r.queryRow(ctx, `SELECT COUNT(*), MIN(created_at) FROM approvals WHERE status = 'pending'`).Scan(&n, &oldest)
	if err != nil {
		return core.PendingSummary{}, fmt.Errorf("sqlite: pending approvals: %w", err)
	}
	return core.PendingSummary{Count: n, Oldest: fromMicros(oldest)}, nil
}

// DecideApproval moves a pending approval to the final status d.Status. The
// UPDATE only matches while the approval is pending, so of concurrent
// deciders, in this process or another, exactly one wins; the others get
// the stored approval and an error wrapping core.ErrAlreadyDecided.
func (s *Store) DecideApproval(ctx context.Context, id string, d core.ApprovalOutcome) (core.Approval, error) {
	switch d.Status {
	case core.ApprovalApproved, core.ApprovalDenied, core.ApprovalExpired, core.ApprovalSuperseded, core.ApprovalCancelled:
	default:
		return core.Approval{}, fmt.Errorf("sqlite: decide approval %q: status %q is not a final status", id, d.Status)
	}
	var a core.Approval
	err := s.inTx(ctx, func(tx *txn) error {
		var err error
		a, err = scanApproval(tx.queryRow(ctx, `UPDATE approvals
			SET status = ?, decided_by_id = ?, decided_by_name = ?, reason = ?, decided_at = ?
			WHERE id = ? AND status = 'pending' RETURNING `+approvalCols,
			string(d.Status), d.DecidedBy.ID, d.DecidedBy.Name, d.Reason, micros(d.DecidedAt), id))
		if !errors.Is(err, core.ErrNotFound) {
			return err
		}
		// Not pending, or not there: the same transaction tells which.
		a, err = scanApproval(tx.queryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
		if err != nil {
			return err
		}
		return core.ErrAlreadyDecided
	})
	switch {
	case errors.Is(err, core.ErrAlreadyDecided):
		return a, fmt.Errorf("sqlite: decide approval %q: %w (%s)", id, err, a.Status)
	case err != nil:
		return core.Approval{}, fmt.Errorf("sqlite: decide approval %q: %w", id, err)
	}
	if a.Votes, err = s.votes(ctx, id); err != nil {
		return core.Approval{}, fmt.Errorf("sqlite: decide approval %q: %w", id, err)
	}
	return a, nil
}

func (s *Store) approvals(ctx context.Context, where string, args ...any) ([]core.Approval, error) {
	rows, err := s.r.query(ctx, `SELECT `+approvalCols+` FROM approvals `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var as []core.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	for i := range as {
		if as[i].Votes, err = s.votes(ctx, as[i].ID); err != nil {
			return nil, err
		}
	}
	return as, nil
}

// scanApproval reads approvalCols; no row is core.ErrNotFound.
func scanApproval(sc scanner) (core.Approval, error) {
	var a core.Approval
	var args, verdict, preview string
	var created, expires, decided sql.NullInt64
	err := sc.Scan(&a.ID, &a.RunID, &a.ConvKey, &a.CallID, &a.Toolset, &a.Tool, &args, &a.ActionHash, &a.Risk,
		&a.Requester.ID, &a.Requester.Name, &a.Status, &a.DecidedBy.ID, &a.DecidedBy.Name, &a.Reason,
		&created, &expires, &decided, &verdict, &preview)
	if errors.Is(err, sql.ErrNoRows) {
		return a, core.ErrNotFound
	}
	if err != nil {
		return a, err
	}
	a.Arguments = codec.RawJSON(args)
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = fromMicros(created), fromMicros(expires), fromMicros(decided)
	if a.Verdict, err = codec.DecodeVerdict(verdict); err != nil {
		return a, fmt.Errorf("verdict of approval %q: %w", a.ID, err)
	}
	if a.Preview, err = codec.DecodePreview(preview); err != nil {
		return a, fmt.Errorf("preview of approval %q: %w", a.ID, err)
	}
	return a, nil
}

// setPreview replaces the preview of approval p.ApprovalID.
func setPreview(ctx context.Context, tx *txn, p core.ApprovalPreview) error {
	enc, err := codec.EncodePreview(&p.Preview)
	if err != nil {
		return err
	}
	res, err := tx.exec(ctx, `UPDATE approvals SET preview = ? WHERE id = ?`, enc, p.ApprovalID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return cmpErr(err, core.ErrNotFound)
	}
	return nil
}
