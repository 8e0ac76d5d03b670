-- 0003_conversation_activity: when each conversation was last active (a
-- stored inbound message, appended messages), so that the most recent
-- conversations can be listed (opsgate chat --resume, the HTTP API).
--
-- updated_at is unix microseconds like every time, but strictly increasing
-- across conversations (a write takes max(now, the latest + 1)), so the
-- order is total even when two conversations are written in the same
-- microsecond or the clock steps back.
ALTER TABLE conversations ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE conversations SET updated_at = max(
	created_at,
	coalesce((SELECT max(stored_at) FROM inbound WHERE inbound.conv_key = conversations.key), 0),
	coalesce((SELECT max(time) FROM messages WHERE messages.conv_key = conversations.key), 0)
);
CREATE INDEX conversations_activity ON conversations (updated_at);
