-- 0007_events: a conversation's events are kept (docs/design.md §15), so that an
-- API stream reconnecting with Last-Event-ID gets what it missed, in order.
-- Sequence numbers now run per conversation, not per run, so one number
-- orders a whole conversation's stream across its runs; each conversation
-- starts above the numbers its runs used before.
CREATE TABLE event_seqs (
	conv_key text PRIMARY KEY,
	seq      bigint NOT NULL
);
INSERT INTO event_seqs (conv_key, seq)
	SELECT r.conv_key, max(s.seq) FROM run_seqs s JOIN runs r ON r.id = s.run_id GROUP BY r.conv_key;

-- body is the event as shown to people (redacted).
CREATE TABLE events (
	conv_key text NOT NULL,
	seq      bigint NOT NULL,
	run_id   text NOT NULL,
	type     text NOT NULL,
	at       timestamptz NOT NULL,
	body     bytea NOT NULL, -- JSON, kept byte for byte
	PRIMARY KEY (conv_key, seq)
);
CREATE INDEX events_run ON events (run_id, seq);
CREATE INDEX events_at ON events (at);
