package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// appendAudit reads the last entry's hash and appends e after it in one
// write transaction (BEGIN IMMEDIATE holds the database's write lock, also
// against other processes), so two appends never share a predecessor.
func appendAudit(ctx context.Context, tx *txn, e core.AuditEntry) error {
	var prev string
	err := tx.queryRow(ctx, `SELECT hash FROM audit ORDER BY id DESC LIMIT 1`).Scan(&prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	e.Time = time.UnixMicro(e.Time.UnixMicro()) // what is stored is what is hashed
	_, err = tx.exec(ctx, `INSERT INTO audit (time, kind, conv_key, run_id, approval_id, actor_id, actor_name,
		toolset, tool, action_hash, risk, duration_ns, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		micros(e.Time), e.Kind, e.ConvKey, e.RunID, e.ApprovalID, e.Actor.ID, e.Actor.Name,
		e.Toolset, e.Tool, e.ActionHash, e.StoredRisk(), int64(e.Duration), e.Detail, prev, e.ChainHash(prev))
	return err
}

// Audit returns the entries matching f, oldest first.
func (s *Store) Audit(ctx context.Context, f core.AuditFilter) ([]core.AuditEntry, error) {
	var conds []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"conv_key", f.ConvKey}, {"run_id", f.RunID}, {"approval_id", f.ApprovalID},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if !f.Since.IsZero() {
		conds = append(conds, "time >= ?")
		args = append(args, f.Since.UnixMicro())
	}
	where := ""
	if len(conds) > 0 {
		where = "WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := s.r.query(ctx, `SELECT id, time, kind, conv_key, run_id, approval_id, actor_id, actor_name,
		toolset, tool, action_hash, risk, duration_ns, detail, prev_hash, hash FROM audit `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: audit: %w", err)
	}
	defer rows.Close()
	var es []core.AuditEntry
	for rows.Next() {
		var e core.AuditEntry
		var t sql.NullInt64
		var d int64
		var risk string
		if err := rows.Scan(&e.ID, &t, &e.Kind, &e.ConvKey, &e.RunID, &e.ApprovalID, &e.Actor.ID, &e.Actor.Name,
			&e.Toolset, &e.Tool, &e.ActionHash, &risk, &d, &e.Detail, &e.PrevHash, &e.Hash); err != nil {
			return nil, fmt.Errorf("sqlite: audit: %w", err)
		}
		e.Time, e.Duration = fromMicros(t), time.Duration(d)
		e.SetStoredRisk(risk)
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: audit: %w", err)
	}
	return es, nil
}
