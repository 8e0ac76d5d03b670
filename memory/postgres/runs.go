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

func createRun(ctx context.Context, tx pgx.Tx, r core.Run) error {
	if err := ensureConversation(ctx, tx, r.ConvKey); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO runs (id, conv_key, requester_id, requester_name, status,
		iterations, ttft_ns, duration_ns, prompt_tokens, completion_tokens, cached_prompt_tokens, total_tokens,
		error, started_at, ended_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		r.ID, r.ConvKey, r.Requester.ID, r.Requester.Name, string(r.Status),
		r.Iterations, int64(r.TTFT), int64(r.Duration), r.Usage.PromptTokens, r.Usage.CompletionTokens,
		r.Usage.CachedPromptTokens, r.Usage.TotalTokens, r.Error, ts(r.StartedAt), ts(r.EndedAt))
	return err
}

// updateRun replaces the mutable fields of run r.ID; a missing run is
// core.ErrNotFound.
func updateRun(ctx context.Context, tx pgx.Tx, r core.Run) error {
	tag, err := tx.Exec(ctx, `UPDATE runs SET status = $1, iterations = $2, ttft_ns = $3, duration_ns = $4,
		prompt_tokens = $5, completion_tokens = $6, cached_prompt_tokens = $7, total_tokens = $8, error = $9, ended_at = $10
		WHERE id = $11`,
		string(r.Status), r.Iterations, int64(r.TTFT), int64(r.Duration), r.Usage.PromptTokens, r.Usage.CompletionTokens,
		r.Usage.CachedPromptTokens, r.Usage.TotalTokens, r.Error, ts(r.EndedAt), r.ID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return core.ErrNotFound
	}
	return nil
}

// runCols are the columns scanRun reads, in order.
const runCols = `id, conv_key, requester_id, requester_name, status, iterations, ttft_ns,
	duration_ns, prompt_tokens, completion_tokens, cached_prompt_tokens, total_tokens, error, started_at, ended_at`

// Run returns run id, or an error wrapping core.ErrNotFound.
func (s *Store) Run(ctx context.Context, id string) (core.Run, error) {
	var r core.Run
	err := s.read(ctx, func(q querier) error {
		var err error
		r, err = scanRun(q.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = $1`, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		err = core.ErrNotFound
	}
	if err != nil {
		return core.Run{}, fmt.Errorf("postgres: run %q: %w", id, err)
	}
	return r, nil
}

// UnfinishedRuns returns the runs still marked running, oldest first.
func (s *Store) UnfinishedRuns(ctx context.Context) ([]core.Run, error) {
	out, err := s.runs(ctx, `WHERE status = 'running' ORDER BY started_at, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: unfinished runs: %w", err)
	}
	return out, nil
}

// ConversationRuns returns the runs of conversation convKey, oldest first.
func (s *Store) ConversationRuns(ctx context.Context, convKey string) ([]core.Run, error) {
	out, err := s.runs(ctx, `WHERE conv_key = $1 ORDER BY started_at, id`, convKey)
	if err != nil {
		return nil, fmt.Errorf("postgres: runs of %q: %w", convKey, err)
	}
	return out, nil
}

func (s *Store) runs(ctx context.Context, where string, args ...any) ([]core.Run, error) {
	var out []core.Run
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT `+runCols+` FROM runs `+where, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.Run, error) { return scanRun(row) })
		return err
	})
	return out, err
}

func scanRun(row pgx.Row) (core.Run, error) {
	var r core.Run
	var ttft, duration int64
	var started, ended *time.Time
	err := row.Scan(&r.ID, &r.ConvKey, &r.Requester.ID, &r.Requester.Name, &r.Status, &r.Iterations, &ttft,
		&duration, &r.Usage.PromptTokens, &r.Usage.CompletionTokens, &r.Usage.CachedPromptTokens, &r.Usage.TotalTokens,
		&r.Error, &started, &ended)
	r.TTFT, r.Duration = time.Duration(ttft), time.Duration(duration)
	r.StartedAt, r.EndedAt = fromTS(started), fromTS(ended)
	return r, err
}

// checkpointCols are the columns scanCheckpoint reads, in order.
const checkpointCols = `run_id, conv_key, requester_id, requester_name, pending, toolsets, iteration, seq, created_at`

func saveCheckpoint(ctx context.Context, tx pgx.Tx, cp core.Checkpoint) error {
	pending, err := codec.EncodePending(cp.Pending)
	if err != nil {
		return fmt.Errorf("pending calls: %w", err)
	}
	toolsets, err := codec.EncodeToolsets(cp.Toolsets)
	if err != nil {
		return fmt.Errorf("toolsets: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO checkpoints (`+checkpointCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (run_id) DO UPDATE SET conv_key = excluded.conv_key, requester_id = excluded.requester_id,
			requester_name = excluded.requester_name, pending = excluded.pending, toolsets = excluded.toolsets,
			iteration = excluded.iteration, seq = excluded.seq, created_at = excluded.created_at`,
		cp.RunID, cp.ConvKey, cp.Requester.ID, cp.Requester.Name, pending, toolsets, cp.Iteration, cp.Seq, ts(cp.CreatedAt))
	return err
}

// Checkpoint returns the checkpoint of runID, or an error wrapping
// core.ErrNotFound.
func (s *Store) Checkpoint(ctx context.Context, runID string) (core.Checkpoint, error) {
	var cp core.Checkpoint
	err := s.read(ctx, func(q querier) error {
		var err error
		cp, err = scanCheckpoint(q.QueryRow(ctx, `SELECT `+checkpointCols+` FROM checkpoints WHERE run_id = $1`, runID))
		return err
	})
	if err != nil {
		return core.Checkpoint{}, fmt.Errorf("postgres: checkpoint of %q: %w", runID, err)
	}
	return cp, nil
}

// ClaimCheckpoint deletes and returns the checkpoint of runID in one
// statement, so of several claimants (in any replica) exactly one gets it;
// the others get an error wrapping core.ErrNotFound.
func (s *Store) ClaimCheckpoint(ctx context.Context, runID string) (core.Checkpoint, error) {
	var cp core.Checkpoint
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		cp, err = scanCheckpoint(tx.QueryRow(ctx, `DELETE FROM checkpoints WHERE run_id = $1 RETURNING `+checkpointCols, runID))
		return err
	})
	if err != nil {
		return core.Checkpoint{}, fmt.Errorf("postgres: claim checkpoint of %q: %w", runID, err)
	}
	return cp, nil
}

// Checkpoints returns the checkpoints of the conversation, oldest first;
// every conversation's for an empty convKey. The two are separate queries
// so that one conversation's uses its index: a generic plan of
// "conv_key = $1 unless $1 is empty" cannot.
func (s *Store) Checkpoints(ctx context.Context, convKey string) ([]core.Checkpoint, error) {
	var cps []core.Checkpoint
	err := s.read(ctx, func(q querier) error {
		sql, args := `SELECT `+checkpointCols+` FROM checkpoints WHERE conv_key = $1 ORDER BY created_at, ord`, []any{convKey}
		if convKey == "" {
			sql, args = `SELECT `+checkpointCols+` FROM checkpoints ORDER BY created_at, ord`, nil
		}
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		cps, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.Checkpoint, error) { return scanCheckpoint(row) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: checkpoints of %q: %w", convKey, err)
	}
	return cps, nil
}

// scanCheckpoint reads checkpointCols; no row is core.ErrNotFound.
func scanCheckpoint(row pgx.Row) (core.Checkpoint, error) {
	var cp core.Checkpoint
	var pending, toolsets string
	var created *time.Time
	err := row.Scan(&cp.RunID, &cp.ConvKey, &cp.Requester.ID, &cp.Requester.Name, &pending, &toolsets, &cp.Iteration, &cp.Seq, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return cp, core.ErrNotFound
	}
	if err != nil {
		return cp, err
	}
	cp.CreatedAt = fromTS(created)
	if cp.Pending, err = codec.DecodePending(pending); err != nil {
		return cp, fmt.Errorf("pending calls: %w", err)
	}
	if cp.Toolsets, err = codec.DecodeToolsets(toolsets); err != nil {
		return cp, fmt.Errorf("toolsets: %w", err)
	}
	return cp, nil
}

// ReserveSeq reserves n sequence numbers of the conversation's events; the row
// lock of the upsert orders concurrent reservations.
func (s *Store) ReserveSeq(ctx context.Context, convKey string, n int64) (int64, error) {
	var last int64
	err := s.inTx(ctx, func(tx pgx.Tx) (err error) {
		last, err = reserveSeq(ctx, tx, convKey, n)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: reserve event sequence numbers of %q: %w", convKey, err)
	}
	return last, nil
}

// reserveSeq reserves n sequence numbers in tx (ReserveSeq, Batch.Seq);
// the row lock of the upsert orders concurrent reservations.
func reserveSeq(ctx context.Context, tx pgx.Tx, convKey string, n int64) (last int64, err error) {
	err = tx.QueryRow(ctx, `INSERT INTO event_seqs (conv_key, seq) VALUES ($1, $2)
		ON CONFLICT (conv_key) DO UPDATE SET seq = event_seqs.seq + excluded.seq RETURNING seq`, convKey, n).Scan(&last)
	return last, err
}
