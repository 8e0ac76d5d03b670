package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/internal/codec"
)

// SaveInbound stores in before it is processed; first is false, and nothing
// is stored, for a redelivery of a message id already seen in the
// conversation.
func (s *Store) SaveInbound(ctx context.Context, in core.Inbound) (first bool, err error) {
	err = s.inTx(ctx, func(tx *txn) error {
		created, err := createConversation(ctx, tx, in.ConvKey)
		if err != nil {
			return err
		}
		// The conflict target names the partial unique index, so messages
		// without an id never conflict.
		res, err := tx.exec(ctx, `INSERT INTO inbound
			(conv_key, message_id, user_id, user_name, text, time, stored_at, run_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (conv_key, message_id) WHERE message_id <> '' DO NOTHING`,
			in.ConvKey, in.MessageID, in.User.ID, in.User.Name, in.Text, micros(in.Time), micros(time.Now()), in.RunID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n != 1 {
			return err // a redelivery is no activity
		}
		first = true
		if created {
			return nil // its activity is this message already
		}
		return touchConversation(ctx, tx, in.ConvKey)
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: save inbound %q in %q: %w", in.MessageID, in.ConvKey, err)
	}
	return first, nil
}

// Conversation returns the conversation key, creating it when missing.
func (s *Store) Conversation(ctx context.Context, key string) (core.Conversation, error) {
	c, err := conversation(ctx, s.r, key)
	if errors.Is(err, sql.ErrNoRows) {
		// Read back through the writer, which has just seen the row.
		if err = ensureConversation(ctx, s.w, key); err == nil {
			c, err = conversation(ctx, s.w, key)
		}
	}
	if err != nil {
		return core.Conversation{}, fmt.Errorf("sqlite: conversation %q: %w", key, err)
	}
	return c, nil
}

func conversation(ctx context.Context, q queryer, key string) (core.Conversation, error) {
	return scanConversation(q.queryRow(ctx, `SELECT `+conversationColumns+` FROM conversations WHERE key = ?`, key))
}

const conversationColumns = `key, title, toolsets, created_at, updated_at`

func scanConversation(row scanner) (core.Conversation, error) {
	var c core.Conversation
	var toolsets string
	var created, updated sql.NullInt64
	if err := row.Scan(&c.Key, &c.Title, &toolsets, &created, &updated); err != nil {
		return c, err
	}
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	var err error
	if c.Toolsets, err = codec.DecodeToolsets(toolsets); err != nil {
		return c, fmt.Errorf("toolsets: %w", err)
	}
	return c, nil
}

// Conversations returns the conversations f selects, the most recently
// active first.
func (s *Store) Conversations(ctx context.Context, f core.ConversationFilter) ([]core.Conversation, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	// substr counts characters of TEXT; the prefix is compared as text, so
	// its length is given in characters too. LIKE would fold case. The
	// range on key lets SQLite seek the primary key's index rather than
	// read every conversation: a chat adapter asks at a chat's first
	// message, before the message is stored (issue 25).
	query, args := conversationsAll, []any{limit}
	if f.KeyPrefix != "" {
		query = conversationsPrefixed
		args = []any{utf8.RuneCountInString(f.KeyPrefix), f.KeyPrefix, f.KeyPrefix + prefixEnd, limit}
	}
	rows, err := s.r.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: conversations: %w", err)
	}
	defer rows.Close()
	var out []core.Conversation
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: conversations: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: conversations: %w", err)
	}
	return out, nil
}

const (
	conversationsAll = `SELECT ` + conversationColumns + ` FROM conversations
		ORDER BY updated_at DESC LIMIT ?`
	conversationsPrefixed = `SELECT ` + conversationColumns + ` FROM conversations
		WHERE key >= ?2 AND key < ?3 AND substr(key, 1, ?1) = ?2 ORDER BY updated_at DESC LIMIT ?4`
)

// prefixEnd follows a prefix to make the bound every key beginning with
// it sorts below: in UTF-8, the byte after a prefix is at most 0xF4, and
// after 0xF4 at most 0x8F.
const prefixEnd = "\xf4\x90"

func updateConversation(ctx context.Context, q queryer, c core.Conversation) error {
	toolsets, err := codec.EncodeToolsets(c.Toolsets)
	if err != nil {
		return err
	}
	created := c.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	_, err = q.exec(ctx, `INSERT INTO conversations (key, created_at, updated_at, title, toolsets)
		VALUES (?1, ?2, `+nextActivity+`, ?3, ?4)
		ON CONFLICT (key) DO UPDATE SET title = excluded.title, toolsets = excluded.toolsets`,
		c.Key, micros(created), c.Title, toolsets)
	return err
}

func markInboundDone(ctx context.Context, q queryer, convKey, messageID string) error {
	_, err := q.exec(ctx, `UPDATE inbound SET done_at = ?
		WHERE conv_key = ? AND message_id = ? AND message_id <> '' AND done_at IS NULL`,
		micros(time.Now()), convKey, messageID)
	return err
}

// PendingInbound returns saved messages not marked done, oldest first.
func (s *Store) PendingInbound(ctx context.Context) ([]core.Inbound, error) {
	rows, err := s.r.query(ctx, `SELECT conv_key, message_id, user_id, user_name, text, time, run_id
		FROM inbound WHERE done_at IS NULL ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: pending inbound: %w", err)
	}
	defer rows.Close()
	var out []core.Inbound
	for rows.Next() {
		var in core.Inbound
		var at sql.NullInt64
		if err := rows.Scan(&in.ConvKey, &in.MessageID, &in.User.ID, &in.User.Name, &in.Text, &at, &in.RunID); err != nil {
			return nil, fmt.Errorf("sqlite: pending inbound: %w", err)
		}
		in.Time = fromMicros(at)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: pending inbound: %w", err)
	}
	return out, nil
}
