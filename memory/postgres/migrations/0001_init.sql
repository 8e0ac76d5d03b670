-- 0001_init: all durable state of opsgate (the SQLite store's migrations
-- 0001-0005 in one). Times are timestamptz (microseconds, like SQLite's
-- integers); durations are bigint nanoseconds. Columns holding raw model
-- output are text, not jsonb: jsonb would normalise what must come back
-- byte for byte, malformed or not (memory/internal/codec).

CREATE TABLE conversations (
	key        text PRIMARY KEY,
	title      text NOT NULL DEFAULT '',
	toolsets   text NOT NULL DEFAULT '[]',
	created_at timestamptz NOT NULL,
	-- Unix microseconds, strictly increasing across conversations (a write
	-- takes max(now, the latest + 1) under the activity lock), so the
	-- order of activity is total.
	updated_at bigint NOT NULL
);
CREATE INDEX conversations_activity ON conversations (updated_at);

CREATE TABLE inbound (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	conv_key   text NOT NULL REFERENCES conversations (key),
	message_id text NOT NULL,
	user_id    text NOT NULL,
	user_name  text NOT NULL,
	text       text NOT NULL,
	time       timestamptz,
	stored_at  timestamptz NOT NULL,
	done_at    timestamptz
);
CREATE UNIQUE INDEX inbound_dedupe ON inbound (conv_key, message_id) WHERE message_id <> '';
CREATE INDEX inbound_pending ON inbound (id) WHERE done_at IS NULL;

CREATE TABLE messages (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	conv_key     text NOT NULL REFERENCES conversations (key),
	role         text NOT NULL,
	content      text NOT NULL,
	tool_calls   text,
	tool_call_id text NOT NULL,
	name         text NOT NULL,
	run_id       text NOT NULL,
	time         timestamptz
);
CREATE INDEX messages_conv ON messages (conv_key, id);

CREATE TABLE runs (
	id                   text PRIMARY KEY,
	conv_key             text NOT NULL REFERENCES conversations (key),
	requester_id         text NOT NULL,
	requester_name       text NOT NULL,
	status               text NOT NULL,
	iterations           integer NOT NULL,
	ttft_ns              bigint NOT NULL,
	duration_ns          bigint NOT NULL,
	prompt_tokens        bigint NOT NULL,
	completion_tokens    bigint NOT NULL,
	cached_prompt_tokens bigint NOT NULL,
	total_tokens         bigint NOT NULL,
	error                text NOT NULL,
	started_at           timestamptz,
	ended_at             timestamptz
);
CREATE INDEX runs_conv ON runs (conv_key);

-- At most one checkpoint per run; ord breaks ties of created_at.
CREATE TABLE checkpoints (
	run_id         text PRIMARY KEY,
	ord            bigint GENERATED ALWAYS AS IDENTITY,
	conv_key       text NOT NULL,
	requester_id   text NOT NULL,
	requester_name text NOT NULL,
	pending        text NOT NULL,
	toolsets       text NOT NULL,
	iteration      integer NOT NULL,
	seq            bigint NOT NULL,
	created_at     timestamptz
);
CREATE INDEX checkpoints_conv ON checkpoints (conv_key, created_at, ord);

CREATE TABLE approvals (
	seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id              text NOT NULL UNIQUE,
	run_id          text NOT NULL,
	conv_key        text NOT NULL,
	call_id         text NOT NULL,
	toolset         text NOT NULL,
	tool            text NOT NULL,
	arguments       text NOT NULL,
	action_hash     text NOT NULL,
	risk            text NOT NULL,
	requester_id    text NOT NULL,
	requester_name  text NOT NULL,
	status          text NOT NULL,
	decided_by_id   text NOT NULL DEFAULT '',
	decided_by_name text NOT NULL DEFAULT '',
	reason          text NOT NULL DEFAULT '',
	created_at      timestamptz,
	expires_at      timestamptz,
	decided_at      timestamptz,
	verdict         text NOT NULL DEFAULT ''
);
CREATE INDEX approvals_run ON approvals (run_id, seq);
CREATE INDEX approvals_pending ON approvals (expires_at) WHERE status = 'pending';

-- One vote per person and approval; never changed or removed.
CREATE TABLE approval_votes (
	seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	approval_id text NOT NULL,
	person      text NOT NULL,
	actor_id    text NOT NULL,
	actor_name  text NOT NULL,
	approve     boolean NOT NULL,
	reason      text NOT NULL,
	at          timestamptz,
	UNIQUE (approval_id, person)
);

-- The audit log: append-only, each entry chained to the one before
-- (core.AuditEntry.ChainHash). GENERATED ALWAYS: an id cannot be chosen.
CREATE TABLE audit (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time        timestamptz,
	kind        text NOT NULL,
	conv_key    text NOT NULL,
	run_id      text NOT NULL,
	approval_id text NOT NULL,
	actor_id    text NOT NULL,
	actor_name  text NOT NULL,
	toolset     text NOT NULL,
	tool        text NOT NULL,
	action_hash text NOT NULL,
	risk        text NOT NULL,
	duration_ns bigint NOT NULL,
	detail      text NOT NULL,
	prev_hash   text NOT NULL,
	hash        text NOT NULL
);
CREATE INDEX audit_conv ON audit (conv_key, id);
CREATE INDEX audit_run ON audit (run_id, id);
CREATE INDEX audit_approval ON audit (approval_id, id);

CREATE FUNCTION opsgate_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
		USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit
	FOR EACH ROW EXECUTE FUNCTION opsgate_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
	FOR EACH STATEMENT EXECUTE FUNCTION opsgate_append_only();
CREATE TRIGGER approval_votes_append_only BEFORE UPDATE OR DELETE ON approval_votes
	FOR EACH ROW EXECUTE FUNCTION opsgate_append_only();
CREATE TRIGGER approval_votes_no_truncate BEFORE TRUNCATE ON approval_votes
	FOR EACH STATEMENT EXECUTE FUNCTION opsgate_append_only();
