package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/internal/codec"
)

// checkpointCols are the columns scanCheckpoint reads, in order.
const checkpointCols = `run_id, conv_key, requester_id, requester_name, pending, toolsets, iteration, seq, created_at`

func saveCheckpoint(ctx context.Context, q queryer, cp core.Checkpoint) error {
	pending, err := codec.EncodePending(cp.Pending)
	if err != nil {
		return fmt.Errorf("pending calls: %w", err)
	}
	toolsets, err := codec.EncodeToolsets(cp.Toolsets)
	if err != nil {
		return fmt.Errorf("toolsets: %w", err)
	}
	_, err = q.exec(ctx, `INSERT INTO checkpoints (`+checkpointCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET conv_key = excluded.conv_key, requester_id = excluded.requester_id,
			requester_name = excluded.requester_name, pending = excluded.pending, toolsets = excluded.toolsets,
			iteration = excluded.iteration, seq = excluded.seq, created_at = excluded.created_at`,
		cp.RunID, cp.ConvKey, cp.Requester.ID, cp.Requester.Name, pending, toolsets, cp.Iteration, cp.Seq, micros(cp.CreatedAt))
	return err
}

// Checkpoint returns the checkpoint of runID, or an error wrapping
// core.ErrNotFound.
func (s *Store) Checkpoint(ctx context.Context, runID string) (core.Checkpoint, error) {
	cp, err := scanCheckpoint(s.r.queryRow(ctx, `SELECT `+checkpointCols+` FROM checkpoints WHERE run_id = ?`, runID))
	if err != nil {
		return core.Checkpoint{}, fmt.Errorf("sqlite: checkpoint of %q: %w", runID, err)
	}
	return cp, nil
}

// ClaimCheckpoint deletes and returns the checkpoint of runID in one
// statement, so of several claimants exactly one gets it; the others get an
// error wrapping core.ErrNotFound.
func (s *Store) ClaimCheckpoint(ctx context.Context, runID string) (core.Checkpoint, error) {
	cp, err := scanCheckpoint(s.w.queryRow(ctx, `DELETE FROM checkpoints WHERE run_id = ? RETURNING `+checkpointCols, runID))
	if err != nil {
		return core.Checkpoint{}, fmt.Errorf("sqlite: claim checkpoint of %q: %w", runID, err)
	}
	return cp, nil
}

// Checkpoints of one conversation seek its index; every new message reads
// them (issue 25: one query for "this conversation, or all when the key
// is empty" scanned the whole table).
const (
	checkpointsOfConv = `SELECT ` + checkpointCols + ` FROM checkpoints WHERE conv_key = ? ORDER BY created_at, rowid`
	checkpointsAll    = `SELECT ` + checkpointCols + ` FROM checkpoints ORDER BY created_at, rowid`
)

// Checkpoints returns the checkpoints of the conversation, oldest first;
// every conversation's for an empty convKey.
func (s *Store) Checkpoints(ctx context.Context, convKey string) ([]core.Checkpoint, error) {
	q, args := checkpointsOfConv, []any{convKey}
	if convKey == "" {
		q, args = checkpointsAll, nil
	}
	rows, err := s.r.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: checkpoints of %q: %w", convKey, err)
	}
	defer rows.Close()
	var cps []core.Checkpoint
	for rows.Next() {
		cp, err := scanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: checkpoints of %q: %w", convKey, err)
		}
		cps = append(cps, cp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: checkpoints of %q: %w", convKey, err)
	}
	return cps, nil
}

// scanCheckpoint reads checkpointCols; no row is core.ErrNotFound.
func scanCheckpoint(sc scanner) (core.Checkpoint, error) {
	var cp core.Checkpoint
	var pending, toolsets string
	var created sql.NullInt64
	err := sc.Scan(&cp.RunID, &cp.ConvKey, &cp.Requester.ID, &cp.Requester.Name, &pending, &toolsets, &cp.Iteration, &cp.Seq, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return cp, core.ErrNotFound
	}
	if err != nil {
		return cp, err
	}
	cp.CreatedAt = fromMicros(created)
	if cp.Pending, err = codec.DecodePending(pending); err != nil {
		return cp, fmt.Errorf("pending calls: %w", err)
	}
	if cp.Toolsets, err = codec.DecodeToolsets(toolsets); err != nil {
		return cp, fmt.Errorf("toolsets: %w", err)
	}
	return cp, nil
}
