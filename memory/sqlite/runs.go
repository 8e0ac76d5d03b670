package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/core"
)

func createRun(ctx context.Context, tx *txn, r core.Run) error {
	if err := ensureConversation(ctx, tx, r.ConvKey); err != nil {
		return err
	}
	_, err := tx.exec(ctx, `INSERT INTO runs (id, conv_key, requester_id, requester_name, status,
		iterations, ttft_ns, duration_ns, prompt_tokens, completion_tokens, cached_prompt_tokens, total_tokens,
		error, started_at, ended_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.ConvKey, r.Requester.ID, r.Requester.Name, string(r.Status),
		r.Iterations, int64(r.TTFT), int64(r.Duration), r.Usage.PromptTokens, r.Usage.CompletionTokens,
		r.Usage.CachedPromptTokens, r.Usage.TotalTokens, r.Error, micros(r.StartedAt), micros(r.EndedAt))
	return err
}

// updateRun is UpdateRun; a missing run is core.ErrNotFound.
func updateRun(ctx context.Context, q queryer, r core.Run) error {
	res, err := q.exec(ctx, `UPDATE runs SET status = ?, iterations = ?, ttft_ns = ?, duration_ns = ?,
		prompt_tokens = ?, completion_tokens = ?, cached_prompt_tokens = ?, total_tokens = ?, error = ?, ended_at = ?
		WHERE id = ?`,
		string(r.Status), r.Iterations, int64(r.TTFT), int64(r.Duration), r.Usage.PromptTokens, r.Usage.CompletionTokens,
		r.Usage.CachedPromptTokens, r.Usage.TotalTokens, r.Error, micros(r.EndedAt), r.ID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return core.ErrNotFound
	}
	return nil
}

// runCols are the columns scanRun reads, in order.
const runCols = `id, conv_key, requester_id, requester_name, status, iterations, ttft_ns,
	duration_ns, prompt_tokens, completion_tokens, cached_prompt_tokens, total_tokens, error, started_at, ended_at`

// Run returns run id, or an error wrapping core.ErrNotFound.
func (s *Store) Run(ctx context.Context, id string) (core.Run, error) {
	r, err := scanRun(s.r.queryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = core.ErrNotFound
	}
	if err != nil {
		return core.Run{}, fmt.Errorf("sqlite: run %q: %w", id, err)
	}
	return r, nil
}

// UnfinishedRuns returns the runs still marked running, oldest first.
func (s *Store) UnfinishedRuns(ctx context.Context) ([]core.Run, error) {
	out, err := s.runs(ctx, `WHERE status = 'running' ORDER BY started_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: unfinished runs: %w", err)
	}
	return out, nil
}

// ConversationRuns returns the runs of conversation convKey, oldest first.
func (s *Store) ConversationRuns(ctx context.Context, convKey string) ([]core.Run, error) {
	out, err := s.runs(ctx, `WHERE conv_key = ? ORDER BY started_at, rowid`, convKey)
	if err != nil {
		return nil, fmt.Errorf("sqlite: runs of %q: %w", convKey, err)
	}
	return out, nil
}

func (s *Store) runs(ctx context.Context, where string, args ...any) ([]core.Run, error) {
	rows, err := s.r.query(ctx, `SELECT `+runCols+` FROM runs `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []core.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanRun(row scanner) (core.Run, error) {
	var r core.Run
	var ttft, duration int64
	var started, ended sql.NullInt64
	err := row.Scan(&r.ID, &r.ConvKey, &r.Requester.ID, &r.Requester.Name, &r.Status, &r.Iterations, &ttft,
		&duration, &r.Usage.PromptTokens, &r.Usage.CompletionTokens, &r.Usage.CachedPromptTokens, &r.Usage.TotalTokens,
		&r.Error, &started, &ended)
	r.TTFT, r.Duration = time.Duration(ttft), time.Duration(duration)
	r.StartedAt, r.EndedAt = fromMicros(started), fromMicros(ended)
	return r, err
}

// ReserveSeq reserves n sequence numbers of the conversation's events.
func (s *Store) ReserveSeq(ctx context.Context, convKey string, n int64) (int64, error) {
	var last int64
	err := s.inTx(ctx, func(tx *txn) (err error) {
		last, err = reserveSeq(ctx, tx, convKey, n)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: reserve event sequence numbers of %q: %w", convKey, err)
	}
	return last, nil
}

// reserveSeq reserves n sequence numbers in tx (ReserveSeq, Batch.Seq).
func reserveSeq(ctx context.Context, tx *txn, convKey string, n int64) (last int64, err error) {
	err = tx.queryRow(ctx, `INSERT INTO event_seqs (conv_key, seq) VALUES (?1, ?2)
		ON CONFLICT (conv_key) DO UPDATE SET seq = seq + ?2 RETURNING seq`, convKey, n).Scan(&last)
	return last, err
}
