-- 0007_run_seqs: event sequence numbers come from the store (docs/design.md §12),
-- so that the processes emitting a run's events (the one running it, one
-- deciding its approval, one resuming it) never hand out the same number.
-- Processes reserve blocks; a number is used once, some are skipped.
CREATE TABLE run_seqs (
	run_id TEXT PRIMARY KEY,
	seq    INTEGER NOT NULL
);
