-- 0002_inbound_done: remember which inbound messages were handled, so that a
-- message stored just before a crash is run after the restart instead of
-- being taken for a duplicate when the platform redelivers it.
ALTER TABLE inbound ADD COLUMN done_at INTEGER;
UPDATE inbound SET done_at = stored_at;
CREATE INDEX inbound_pending ON inbound (id) WHERE done_at IS NULL;
