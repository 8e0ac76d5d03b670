-- 0014_incidents: one row per incident that an Alertmanager alert group
-- opened (docs/design.md §19). key is the incident conversation's
-- ("incident:<hash>"); (group_key, seq) numbers a group's incidents, so two
-- processes cannot open the same one twice. version makes updates
-- compare-and-set. thread is the chat conversation the incident is shown
-- in ('' until its root is posted). data holds the rest of the record as
-- JSON (alerts, history, times). Times are unix microseconds.
CREATE TABLE incidents (
	key        TEXT PRIMARY KEY,
	group_key  TEXT NOT NULL,
	seq        INTEGER NOT NULL,
	thread     TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL,
	opened_at  INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	version    INTEGER NOT NULL,
	data       TEXT NOT NULL,
	UNIQUE (group_key, seq)
);
CREATE INDEX incidents_thread ON incidents (thread) WHERE thread <> '';
