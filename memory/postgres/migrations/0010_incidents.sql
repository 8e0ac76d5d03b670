-- 0010_incidents: one row per incident that an Alertmanager alert group
-- opened (docs/design.md §19). key is the incident conversation's
-- ("incident:<hash>"); (group_key, seq) numbers a group's incidents, so two
-- replicas cannot open the same one twice. version makes updates
-- compare-and-set. thread is the chat conversation the incident is shown
-- in ('' until its root is posted). data holds the rest of the record as
-- JSON (alerts, history, times).
CREATE TABLE incidents (
	key        text PRIMARY KEY,
	group_key  text NOT NULL,
	seq        integer NOT NULL,
	thread     text NOT NULL DEFAULT '',
	status     text NOT NULL,
	opened_at  timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	version    bigint NOT NULL,
	data       jsonb NOT NULL,
	UNIQUE (group_key, seq)
);
CREATE INDEX incidents_thread ON incidents (thread) WHERE thread <> '';
