-- 0012_idempotency: the Idempotency-Keys of the HTTP API's POST …/messages
-- (docs/design.md §16), per conversation, each naming the run that answers it; the
-- API ignores (and replaces) one older than 24 h.
CREATE TABLE api_idempotency (
	conv_key   TEXT NOT NULL,
	key        TEXT NOT NULL,
	body_hash  BLOB NOT NULL,
	run_id     TEXT NOT NULL,
	created_at INTEGER NOT NULL, -- unix microseconds
	PRIMARY KEY (conv_key, key)
);
CREATE INDEX api_idempotency_created ON api_idempotency (created_at);

-- The run a stored message names (core.Inbound.RunID) is the run that
-- answers it, also when another replica or a restart runs it.
ALTER TABLE inbound ADD COLUMN run_id TEXT NOT NULL DEFAULT '';
