package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// AppendAudit appends e to the audit log; the store assigns e.ID. The table
// rejects UPDATE and DELETE (triggers in migrations/0001_init.sql).
func (s *Store) AppendAudit(ctx context.Context, e core.AuditEntry) error {
	if err := appendAudit(ctx, s.w, e); err != nil {
		return fmt.Errorf("sqlite: append audit %s: %w", e.Kind, err)
	}
	return nil
}

func appendAudit(ctx context.Context, q queryer, e core.AuditEntry) error {
	_, err := q.exec(ctx, `INSERT INTO audit (time, kind, conv_key, run_id, approval_id, actor_id, actor_name,
		toolset, tool, action_hash, risk, duration_ns, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		micros(e.Time), e.Kind, e.ConvKey, e.RunID, e.ApprovalID, e.Actor.ID, e.Actor.Name,
		e.Toolset, e.Tool, e.ActionHash, string(e.Risk), int64(e.Duration), e.Detail)
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
	where := ""
	if len(conds) > 0 {
		where = "WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := s.r.query(ctx, `SELECT id, time, kind, conv_key, run_id, approval_id, actor_id, actor_name,
		toolset, tool, action_hash, risk, duration_ns, detail FROM audit `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: audit: %w", err)
	}
	defer rows.Close()
	var es []core.AuditEntry
	for rows.Next() {
		var e core.AuditEntry
		var t sql.NullInt64
		var d int64
		if err := rows.Scan(&e.ID, &t, &e.Kind, &e.ConvKey, &e.RunID, &e.ApprovalID, &e.Actor.ID, &e.Actor.Name,
			&e.Toolset, &e.Tool, &e.ActionHash, &e.Risk, &d, &e.Detail); err != nil {
			return nil, fmt.Errorf("sqlite: audit: %w", err)
		}
		e.Time, e.Duration = fromMicros(t), time.Duration(d)
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: audit: %w", err)
	}
	return es, nil
}
