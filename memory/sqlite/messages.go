package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/internal/codec"
)

func appendMessages(ctx context.Context, tx *txn, key string, msgs []core.Message) error {
	if err := touchConversation(ctx, tx, key); err != nil {
		return err
	}
	stmt, err := tx.stmt(ctx, `INSERT INTO messages
		(conv_key, role, content, tool_calls, tool_call_id, name, run_id, time)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for i, m := range msgs {
		calls, err := codec.EncodeCalls(m.ToolCalls)
		if err != nil {
			return fmt.Errorf("message %d: tool calls: %w", i, err)
		}
		if _, err := stmt.ExecContext(ctx, key, string(m.Role), m.Content, calls, m.ToolCallID, m.Name, m.RunID, micros(m.Time)); err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
	}
	return nil
}

// Messages returns the transcript of key, oldest first; empty for a
// conversation without messages.
func (s *Store) Messages(ctx context.Context, key string) ([]core.Message, error) {
	rows, err := s.r.query(ctx, `SELECT role, content, tool_calls, tool_call_id, name, run_id, time
		FROM messages WHERE conv_key = ? ORDER BY id`, key)
	if err != nil {
		return nil, fmt.Errorf("sqlite: messages of %q: %w", key, err)
	}
	defer rows.Close()
	var msgs []core.Message
	for rows.Next() {
		var m core.Message
		var calls sql.NullString
		var t sql.NullInt64
		if err := rows.Scan(&m.Role, &m.Content, &calls, &m.ToolCallID, &m.Name, &m.RunID, &t); err != nil {
			return nil, fmt.Errorf("sqlite: messages of %q: %w", key, err)
		}
		if m.ToolCalls, err = codec.DecodeCalls(calls.String); err != nil {
			return nil, fmt.Errorf("sqlite: messages of %q: tool calls: %w", key, err)
		}
		m.Time = fromMicros(t)
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: messages of %q: %w", key, err)
	}
	return msgs, nil
}
