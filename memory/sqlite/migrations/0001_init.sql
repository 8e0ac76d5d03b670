-- 0001_init: all durable state of opsgate.
--
-- Times are INTEGER unix microseconds in UTC (NULL for the zero time), the
-- precision PostgreSQL keeps too. Durations are INTEGER nanoseconds. JSON
-- columns hold raw model output as JSON strings so that it comes back byte
-- for byte, malformed or not.

CREATE TABLE conversations (
	key        TEXT PRIMARY KEY,
	title      TEXT NOT NULL DEFAULT '',
	toolsets   TEXT NOT NULL DEFAULT '[]', -- JSON [{"name":…,"write":…}]
	created_at INTEGER NOT NULL
);

-- Every inbound message is stored before it is processed; the partial unique
-- index turns a redelivery into a no-op, while messages without a platform
-- id are never deduplicated.
CREATE TABLE inbound (
	id         INTEGER PRIMARY KEY,
	conv_key   TEXT NOT NULL REFERENCES conversations (key),
	message_id TEXT NOT NULL,
	user_id    TEXT NOT NULL,
	user_name  TEXT NOT NULL,
	text       TEXT NOT NULL,
	time       INTEGER,
	stored_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX inbound_dedupe ON inbound (conv_key, message_id) WHERE message_id <> '';

-- The transcript; id gives the order.
CREATE TABLE messages (
	id           INTEGER PRIMARY KEY,
	conv_key     TEXT NOT NULL REFERENCES conversations (key),
	role         TEXT NOT NULL,
	content      TEXT NOT NULL,
	tool_calls   TEXT, -- JSON [{"id":…,"name":…,"arguments":"<raw>"}], NULL when none
	tool_call_id TEXT NOT NULL,
	name         TEXT NOT NULL,
	run_id       TEXT NOT NULL,
	time         INTEGER
);
CREATE INDEX messages_conv ON messages (conv_key, id);

CREATE TABLE runs (
	id                   TEXT PRIMARY KEY,
	conv_key             TEXT NOT NULL REFERENCES conversations (key),
	requester_id         TEXT NOT NULL,
	requester_name       TEXT NOT NULL,
	status               TEXT NOT NULL,
	iterations           INTEGER NOT NULL,
	ttft_ns              INTEGER NOT NULL,
	duration_ns          INTEGER NOT NULL,
	prompt_tokens        INTEGER NOT NULL,
	completion_tokens    INTEGER NOT NULL,
	cached_prompt_tokens INTEGER NOT NULL,
	total_tokens         INTEGER NOT NULL,
	error                TEXT NOT NULL,
	started_at           INTEGER,
	ended_at             INTEGER
);
CREATE INDEX runs_conv ON runs (conv_key);

-- At most one checkpoint per run: a paused run. No foreign key to runs, so
-- that resuming never depends on the order in which rows were written.
CREATE TABLE checkpoints (
	run_id         TEXT PRIMARY KEY,
	conv_key       TEXT NOT NULL,
	requester_id   TEXT NOT NULL,
	requester_name TEXT NOT NULL,
	pending        TEXT NOT NULL, -- JSON, see codec.go
	toolsets       TEXT NOT NULL, -- JSON
	iteration      INTEGER NOT NULL,
	seq            INTEGER NOT NULL,
	created_at     INTEGER
);
CREATE INDEX checkpoints_conv ON checkpoints (conv_key, created_at);

-- seq gives the creation order; id is the random public id.
CREATE TABLE approvals (
	seq             INTEGER PRIMARY KEY,
	id              TEXT NOT NULL UNIQUE,
	run_id          TEXT NOT NULL,
	conv_key        TEXT NOT NULL,
	call_id         TEXT NOT NULL,
	toolset         TEXT NOT NULL,
	tool            TEXT NOT NULL,
	arguments       TEXT NOT NULL,
	action_hash     TEXT NOT NULL,
	risk            TEXT NOT NULL,
	requester_id    TEXT NOT NULL,
	requester_name  TEXT NOT NULL,
	status          TEXT NOT NULL,
	decided_by_id   TEXT NOT NULL DEFAULT '',
	decided_by_name TEXT NOT NULL DEFAULT '',
	reason          TEXT NOT NULL DEFAULT '',
	created_at      INTEGER,
	expires_at      INTEGER,
	decided_at      INTEGER
);
CREATE INDEX approvals_run ON approvals (run_id, seq);
CREATE INDEX approvals_pending ON approvals (expires_at) WHERE status = 'pending';

-- The audit log is append-only. AUTOINCREMENT: an id is never reused.
CREATE TABLE audit (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	time        INTEGER,
	kind        TEXT NOT NULL,
	conv_key    TEXT NOT NULL,
	run_id      TEXT NOT NULL,
	approval_id TEXT NOT NULL,
	actor_id    TEXT NOT NULL,
	actor_name  TEXT NOT NULL,
	toolset     TEXT NOT NULL,
	tool        TEXT NOT NULL,
	action_hash TEXT NOT NULL,
	risk        TEXT NOT NULL,
	duration_ns INTEGER NOT NULL,
	detail      TEXT NOT NULL
);
CREATE INDEX audit_conv ON audit (conv_key, id);
CREATE INDEX audit_run ON audit (run_id, id);
CREATE INDEX audit_approval ON audit (approval_id, id);

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
	SELECT RAISE(ABORT, 'audit log is append-only: UPDATE is not allowed');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
	SELECT RAISE(ABORT, 'audit log is append-only: DELETE is not allowed');
END;

-- INSERT OR REPLACE deletes the old row without firing DELETE triggers.
CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit
WHEN EXISTS (SELECT 1 FROM audit WHERE id = NEW.id)
BEGIN
	SELECT RAISE(ABORT, 'audit log is append-only: an id cannot be written twice');
END;
