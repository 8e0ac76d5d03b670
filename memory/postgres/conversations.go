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

// SaveInbound stores in before it is processed; first is false, and nothing
// is stored, for a redelivery of a message id already seen in the
// conversation.
func (s *Store) SaveInbound(ctx context.Context, in core.Inbound) (first bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		first = false
		created, err := createConversation(ctx, tx, in.ConvKey)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO inbound (conv_key, message_id, user_id, user_name, text, time, stored_at, run_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (conv_key, message_id) WHERE message_id <> '' DO NOTHING`,
			in.ConvKey, in.MessageID, in.User.ID, in.User.Name, in.Text, ts(in.Time), time.Now(), in.RunID)
		if err != nil || tag.RowsAffected() != 1 {
			return err // a redelivery is no activity
		}
		first = true
		if created {
			return nil // its activity is this message already
		}
		return touchConversation(ctx, tx, in.ConvKey)
	})
	if err != nil {
		return false, fmt.Errorf("postgres: save inbound %q in %q: %w", in.MessageID, in.ConvKey, err)
	}
	return first, nil
}

// PendingInbound returns saved messages not marked done, oldest first.
func (s *Store) PendingInbound(ctx context.Context) ([]core.Inbound, error) {
	var out []core.Inbound
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT conv_key, message_id, user_id, user_name, text, time, run_id
			FROM inbound WHERE done_at IS NULL ORDER BY id`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.Inbound, error) {
			var in core.Inbound
			var at *time.Time
			err := row.Scan(&in.ConvKey, &in.MessageID, &in.User.ID, &in.User.Name, &in.Text, &at, &in.RunID)
			in.Time = fromTS(at)
			return in, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: pending inbound: %w", err)
	}
	return out, nil
}

func markInboundDone(ctx context.Context, tx pgx.Tx, convKey, messageID string) error {
	_, err := tx.Exec(ctx, `UPDATE inbound SET done_at = $1
		WHERE conv_key = $2 AND message_id = $3 AND message_id <> '' AND done_at IS NULL`,
		time.Now(), convKey, messageID)
	return err
}

// Conversation returns the conversation key, creating it when missing.
func (s *Store) Conversation(ctx context.Context, key string) (core.Conversation, error) {
	var c core.Conversation
	err := s.read(ctx, func(q querier) error {
		var err error
		c, err = scanConversation(q.QueryRow(ctx, `SELECT `+conversationColumns+` FROM conversations WHERE key = $1`, key))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.inTx(ctx, func(tx pgx.Tx) error {
			if err := ensureConversation(ctx, tx, key); err != nil {
				return err
			}
			c, err = scanConversation(tx.QueryRow(ctx, `SELECT `+conversationColumns+` FROM conversations WHERE key = $1`, key))
			return err
		})
	}
	if err != nil {
		return core.Conversation{}, fmt.Errorf("postgres: conversation %q: %w", key, err)
	}
	return c, nil
}

const conversationColumns = `key, title, toolsets, created_at, updated_at`

func scanConversation(row pgx.Row) (core.Conversation, error) {
	var c core.Conversation
	var toolsets string
	var created time.Time
	var updated int64
	if err := row.Scan(&c.Key, &c.Title, &toolsets, &created, &updated); err != nil {
		return c, err
	}
	c.CreatedAt, c.UpdatedAt = created.UTC(), time.UnixMicro(updated).UTC()
	var err error
	if c.Toolsets, err = codec.DecodeToolsets(toolsets); err != nil {
		return c, fmt.Errorf("toolsets: %w", err)
	}
	return c, nil
}

// Conversations returns the conversations f selects, the most recently
// active first.
func (s *Store) Conversations(ctx context.Context, f core.ConversationFilter) ([]core.Conversation, error) {
	var limit any // NULL: no limit
	if f.Limit > 0 {
		limit = f.Limit
	}
	var out []core.Conversation
	err := s.read(ctx, func(q querier) error {
		// starts_with compares code points; LIKE would read % and _ in the
		// prefix as patterns.
		rows, err := q.Query(ctx, `SELECT `+conversationColumns+` FROM conversations
			WHERE starts_with(key, $1) ORDER BY updated_at DESC LIMIT $2`, f.KeyPrefix, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.Conversation, error) {
			return scanConversation(row)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: conversations: %w", err)
	}
	return out, nil
}

func updateConversation(ctx context.Context, tx pgx.Tx, c core.Conversation) error {
	toolsets, err := codec.EncodeToolsets(c.Toolsets)
	if err != nil {
		return err
	}
	created := c.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	if err := lock(ctx, tx, "activity"); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO conversations (key, created_at, updated_at, title, toolsets)
		VALUES ($1, $2, `+nextActivity+`, $3, $4)
		ON CONFLICT (key) DO UPDATE SET title = excluded.title, toolsets = excluded.toolsets`,
		c.Key, created, c.Title, toolsets)
	return err
}

// ensureConversation creates the conversation key when it is missing, so
// that any method may be the first to use a conversation.
func ensureConversation(ctx context.Context, tx pgx.Tx, key string) error {
	_, err := createConversation(ctx, tx, key)
	return err
}

// createConversation is ensureConversation saying whether it created the
// conversation, whose activity is then now (no touch needed).
func createConversation(ctx context.Context, tx pgx.Tx, key string) (created bool, err error) {
	if err := lock(ctx, tx, "activity"); err != nil {
		return false, err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO conversations (key, created_at, updated_at)
		VALUES ($1, $2, `+nextActivity+`) ON CONFLICT (key) DO NOTHING`, key, time.Now())
	return err == nil && tag.RowsAffected() == 1, err
}

// touchConversation records activity in the conversation key, creating it
// when missing.
func touchConversation(ctx context.Context, tx pgx.Tx, key string) error {
	if err := lock(ctx, tx, "activity"); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO conversations (key, created_at, updated_at)
		VALUES ($1, $2, `+nextActivity+`) ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`,
		key, time.Now())
	return err
}

// nextActivity is the updated_at of an activity at time $2: that time in
// unix microseconds, or just after the latest activity of any conversation
// when that is later, so that activities are totally ordered. Callers hold
// the activity lock, so no two transactions compute the same value.
const nextActivity = `greatest((extract(epoch FROM $2::timestamptz) * 1000000)::bigint,
	(SELECT coalesce(max(updated_at), 0) + 1 FROM conversations))`

func appendMessages(ctx context.Context, tx pgx.Tx, key string, msgs []core.Message) error {
	if err := touchConversation(ctx, tx, key); err != nil {
		return err
	}
	rows := make([][]any, len(msgs))
	for i, m := range msgs {
		calls, err := codec.EncodeCalls(m.ToolCalls)
		if err != nil {
			return fmt.Errorf("message %d: tool calls: %w", i, err)
		}
		rows[i] = []any{key, string(m.Role), m.Content, calls, m.ToolCallID, m.Name, m.RunID, ts(m.Time)}
	}
	// One round trip for the whole batch; ids follow the order of rows.
	b := &pgx.Batch{}
	for _, r := range rows {
		b.Queue(`INSERT INTO messages (conv_key, role, content, tool_calls, tool_call_id, name, run_id, time)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, r...)
	}
	return tx.SendBatch(ctx, b).Close()
}

// Messages returns the transcript of key, oldest first.
func (s *Store) Messages(ctx context.Context, key string) ([]core.Message, error) {
	var msgs []core.Message
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT role, content, tool_calls, tool_call_id, name, run_id, time
			FROM messages WHERE conv_key = $1 ORDER BY id`, key)
		if err != nil {
			return err
		}
		msgs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.Message, error) {
			var m core.Message
			var calls *string
			var t *time.Time
			if err := row.Scan(&m.Role, &m.Content, &calls, &m.ToolCallID, &m.Name, &m.RunID, &t); err != nil {
				return m, err
			}
			var err error
			if calls != nil {
				if m.ToolCalls, err = codec.DecodeCalls(*calls); err != nil {
					return m, fmt.Errorf("tool calls: %w", err)
				}
			}
			m.Time = fromTS(t)
			return m, nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: messages of %q: %w", key, err)
	}
	return msgs, nil
}
