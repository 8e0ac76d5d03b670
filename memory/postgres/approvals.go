package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/internal/codec"
)

// approvalCols are the columns scanApproval reads, in order.
const approvalCols = `id, run_id, conv_key, call_id, toolset, tool, arguments, action_hash, risk,
	requester_id, requester_name, status, decided_by_id, decided_by_name, reason, created_at, expires_at, decided_at, verdict, preview`

func createApprovals(ctx context.Context, tx pgx.Tx, as []core.Approval) error {
	for _, a := range as {
		verdict, err := codec.EncodeVerdict(a.Verdict)
		if err != nil {
			return fmt.Errorf("approval %q: %w", a.ID, err)
		}
		preview, err := codec.EncodePreview(a.Preview)
		if err != nil {
			return fmt.Errorf("approval %q: %w", a.ID, err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO approvals (`+approvalCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
			a.ID, a.RunID, a.ConvKey, a.CallID, a.Toolset, a.Tool, string(a.Arguments),
			a.ActionHash, string(a.Risk), a.Requester.ID, a.Requester.Name, string(a.Status),
			a.DecidedBy.ID, a.DecidedBy.Name, a.Reason, ts(a.CreatedAt), ts(a.ExpiresAt), ts(a.DecidedAt), verdict, preview)
		if err != nil {
			return fmt.Errorf("approval %q: %w", a.ID, err)
		}
	}
	return nil
}

// Approval returns approval id with its votes, or an error wrapping
// core.ErrNotFound.
func (s *Store) Approval(ctx context.Context, id string) (core.Approval, error) {
	var a core.Approval
	err := s.read(ctx, func(q querier) error {
		var err error
		if a, err = scanApproval(q.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id)); err != nil {
			return err
		}
		a.Votes, err = votes(ctx, q, id)
		return err
	})
	if err != nil {
		return core.Approval{}, fmt.Errorf("postgres: approval %q: %w", id, err)
	}
	return a, nil
}

// AddVote records v on a pending approval. The approval's row is locked
// for the transaction, so a vote and a decision never interleave; the
// UNIQUE (approval_id, person) constraint makes a person's vote one-shot.
func (s *Store) AddVote(ctx context.Context, id string, v core.Vote) (core.Approval, error) {
	var a core.Approval
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var status string
		if err := tx.QueryRow(ctx, `SELECT status FROM approvals WHERE id = $1 FOR UPDATE`, id).Scan(&status); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return core.ErrNotFound
			}
			return err
		}
		var verr error
		if status != string(core.ApprovalPending) {
			verr = core.ErrAlreadyDecided
		} else {
			tag, err := tx.Exec(ctx, `INSERT INTO approval_votes (approval_id, person, actor_id, actor_name, approve, reason, at)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (approval_id, person) DO NOTHING`,
				id, v.Person, v.Actor.ID, v.Actor.Name, v.Approve, v.Reason, ts(v.At))
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				verr = core.ErrAlreadyVoted
			}
		}
		var err error
		if a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id)); err != nil {
			return err
		}
		if a.Votes, err = votes(ctx, tx, id); err != nil {
			return err
		}
		return verr
	})
	switch {
	case errors.Is(err, core.ErrAlreadyVoted), errors.Is(err, core.ErrAlreadyDecided):
		return a, fmt.Errorf("postgres: vote on approval %q: %w", id, err)
	case err != nil:
		return core.Approval{}, fmt.Errorf("postgres: vote on approval %q: %w", id, err)
	}
	return a, nil
}

// votes returns the votes on approval id, oldest first.
func votes(ctx context.Context, q querier, id string) ([]core.Vote, error) {
	rows, err := q.Query(ctx, `SELECT person, actor_id, actor_name, approve, reason, at
		FROM approval_votes WHERE approval_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.Vote, error) {
		var v core.Vote
		var at *time.Time
		err := row.Scan(&v.Person, &v.Actor.ID, &v.Actor.Name, &v.Approve, &v.Reason, &at)
		v.At = fromTS(at)
		return v, err
	})
}

// Approvals returns the approvals of runID in creation order.
func (s *Store) Approvals(ctx context.Context, runID string) ([]core.Approval, error) {
	as, err := s.approvals(ctx, `WHERE run_id = $1 ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("postgres: approvals of run %q: %w", runID, err)
	}
	return as, nil
}

// PendingApprovals returns every approval still pending, across all
// conversations, oldest first.
func (s *Store) PendingApprovals(ctx context.Context) ([]core.Approval, error) {
	as, err := s.approvals(ctx, `WHERE status = 'pending' ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("postgres: pending approvals: %w", err)
	}
	return as, nil
}

// ExpiredApprovals returns the pending approvals that expired before now,
// the longest expired first.
func (s *Store) ExpiredApprovals(ctx context.Context, now time.Time) ([]core.Approval, error) {
	as, err := s.approvals(ctx, `WHERE status = 'pending' AND expires_at < $1 ORDER BY expires_at, seq`, now)
	if err != nil {
		return nil, fmt.Errorf("postgres: expired approvals: %w", err)
	}
	return as, nil
}

// PendingSummary counts the pending approvals and finds the oldest.
func (s *Store) PendingSummary(ctx context.Context) (core.PendingSummary, error) {
	var n int
	var oldest *time.Time
	err := s.read(ctx, func(q querier) error {
		return q.QueryRow(ctx, `SELECT count(*), min(created_at) FROM approvals WHERE status = 'pending'`).Scan(&n, &oldest)
	})
	if err != nil {
		return core.PendingSummary{}, fmt.Errorf("postgres: pending approvals: %w", err)
	}
	return core.PendingSummary{Count: n, Oldest: fromTS(oldest)}, nil
}

// DecideApproval moves a pending approval to the final status d.Status. The
// UPDATE only matches while the approval is pending, so of concurrent
// deciders, in any replica, exactly one wins; the others get the stored
// approval and an error wrapping core.ErrAlreadyDecided.
func (s *Store) DecideApproval(ctx context.Context, id string, d core.ApprovalOutcome) (core.Approval, error) {
	switch d.Status {
	case core.ApprovalApproved, core.ApprovalDenied, core.ApprovalExpired, core.ApprovalSuperseded, core.ApprovalCancelled:
	default:
		return core.Approval{}, fmt.Errorf("postgres: decide approval %q: status %q is not a final status", id, d.Status)
	}
	var a core.Approval
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		a, err = scanApproval(tx.QueryRow(ctx, `UPDATE approvals
			SET status = $1, decided_by_id = $2, decided_by_name = $3, reason = $4, decided_at = $5
			WHERE id = $6 AND status = 'pending' RETURNING `+approvalCols,
			string(d.Status), d.DecidedBy.ID, d.DecidedBy.Name, d.Reason, ts(d.DecidedAt), id))
		decided := err == nil
		if err != nil && !errors.Is(err, core.ErrNotFound) {
			return err
		}
		if !decided {
			// Not pending, or not there: the same transaction tells which.
			if a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id)); err != nil {
				return err
			}
		}
		if a.Votes, err = votes(ctx, tx, id); err != nil {
			return err
		}
		if !decided {
			return core.ErrAlreadyDecided
		}
		return nil
	})
	switch {
	case errors.Is(err, core.ErrAlreadyDecided):
		return a, fmt.Errorf("postgres: decide approval %q: %w (%s)", id, err, a.Status)
	case err != nil:
		return core.Approval{}, fmt.Errorf("postgres: decide approval %q: %w", id, err)
	}
	return a, nil
}

func (s *Store) approvals(ctx context.Context, where string, args ...any) ([]core.Approval, error) {
	var as []core.Approval
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT `+approvalCols+` FROM approvals `+where, args...)
		if err != nil {
			return err
		}
		if as, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.Approval, error) { return scanApproval(row) }); err != nil {
			return err
		}
		for i := range as {
			if as[i].Votes, err = votes(ctx, q, as[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
	return as, err
}

// scanApproval reads approvalCols; no row is core.ErrNotFound.
func scanApproval(row pgx.Row) (core.Approval, error) {
	var a core.Approval
	var args, verdict, preview string
	var created, expires, decided *time.Time
	err := row.Scan(&a.ID, &a.RunID, &a.ConvKey, &a.CallID, &a.Toolset, &a.Tool, &args, &a.ActionHash, &a.Risk,
		&a.Requester.ID, &a.Requester.Name, &a.Status, &a.DecidedBy.ID, &a.DecidedBy.Name, &a.Reason,
		&created, &expires, &decided, &verdict, &preview)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, core.ErrNotFound
	}
	if err != nil {
		return a, err
	}
	a.Arguments = codec.RawJSON(args)
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = fromTS(created), fromTS(expires), fromTS(decided)
	if a.Verdict, err = codec.DecodeVerdict(verdict); err != nil {
		return a, fmt.Errorf("verdict of approval %q: %w", a.ID, err)
	}
	if a.Preview, err = codec.DecodePreview(preview); err != nil {
		return a, fmt.Errorf("preview of approval %q: %w", a.ID, err)
	}
	return a, nil
}

// setPreview replaces the preview of approval p.ApprovalID.
func setPreview(ctx context.Context, tx pgx.Tx, p core.ApprovalPreview) error {
	enc, err := codec.EncodePreview(&p.Preview)
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `UPDATE approvals SET preview = $1 WHERE id = $2`, enc, p.ApprovalID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return core.ErrNotFound
	}
	return nil
}
