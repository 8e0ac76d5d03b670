-- 0011_events: a conversation's events are kept (docs/design.md §15), so that an
-- API stream reconnecting with Last-Event-ID gets what it missed, in order.
-- Sequence numbers now run per conversation, not per run, so one number
-- orders a whole conversation's stream across its runs; each conversation
-- starts above the numbers its runs used before.
CREATE TABLE event_seqs (
	conv_key TEXT PRIMARY KEY,
	seq      INTEGER NOT NULL
);
INSERT INTO event_seqs (conv_key, seq)
	SELECT r.conv_key, max(s.seq) FROM run_seqs s JOIN runs r ON r.id = s.run_id GROUP BY r.conv_key;

-- body is the event as shown to people (redacted), as JSON.
CREATE TABLE events (
	conv_key TEXT NOT NULL,
	seq      INTEGER NOT NULL,
	run_id   TEXT NOT NULL,
	type     TEXT NOT NULL,
	at       INTEGER NOT NULL, -- unix microseconds
	body     BLOB NOT NULL,
	PRIMARY KEY (conv_key, seq)
) WITHOUT ROWID;
CREATE INDEX events_run ON events (run_id, seq);
CREATE INDEX events_at ON events (at);
