package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

// appendAudit appends e after the last entry. The audit lock serialises
// appends across replicas until commit, so two entries never share a
// predecessor and ids follow the chain.
func appendAudit(ctx context.Context, tx pgx.Tx, e core.AuditEntry) error {
	if err := lock(ctx, tx, "audit"); err != nil {
		return err
	}
	var prev string
	err := tx.QueryRow(ctx, `SELECT hash FROM audit ORDER BY id DESC LIMIT 1`).Scan(&prev)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	e.Time = time.UnixMicro(e.Time.UnixMicro()) // what is stored is what is hashed
	_, err = tx.Exec(ctx, `INSERT INTO audit (time, kind, conv_key, run_id, approval_id, actor_id, actor_name,
		toolset, tool, action_hash, risk, duration_ns, detail, prev_hash, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		ts(e.Time), e.Kind, e.ConvKey, e.RunID, e.ApprovalID, e.Actor.ID, e.Actor.Name,
		e.Toolset, e.Tool, e.ActionHash, e.StoredRisk(), int64(e.Duration), e.Detail, prev, e.ChainHash(prev))
	return err
}

// Audit returns the entries matching f, oldest first.
func (s *Store) Audit(ctx context.Context, f core.AuditFilter) ([]core.AuditEntry, error) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	for _, c := range []struct{ col, val string }{
		{"conv_key", f.ConvKey}, {"run_id", f.RunID}, {"approval_id", f.ApprovalID},
	} {
		if c.val != "" {
			add(c.col+" = ?", c.val)
		}
	}
	if !f.Since.IsZero() {
		add("time >= ?", f.Since)
	}
	where := ""
	if len(conds) > 0 {
		where = "WHERE " + strings.Join(conds, " AND ")
	}
	var es []core.AuditEntry
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT id, time, kind, conv_key, run_id, approval_id, actor_id, actor_name,
			toolset, tool, action_hash, risk, duration_ns, detail, prev_hash, hash FROM audit `+where+` ORDER BY id`, args...)
		if err != nil {
			return err
		}
		es, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.AuditEntry, error) {
			var e core.AuditEntry
			var t *time.Time
			var d int64
			var risk string
			err := row.Scan(&e.ID, &t, &e.Kind, &e.ConvKey, &e.RunID, &e.ApprovalID, &e.Actor.ID, &e.Actor.Name,
				&e.Toolset, &e.Tool, &e.ActionHash, &risk, &d, &e.Detail, &e.PrevHash, &e.Hash)
			e.Time, e.Duration = fromTS(t), time.Duration(d)
			e.SetStoredRisk(risk)
			return e, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: audit: %w", err)
	}
	return es, nil
}
