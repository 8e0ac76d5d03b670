-- 0004_run_seqs: event sequence numbers come from the store (docs/design.md §12),
-- so that the replicas emitting a run's events never hand out the same
-- number. Replicas reserve blocks; a number is used once, some are skipped.
CREATE TABLE run_seqs (
	run_id text PRIMARY KEY,
	seq    bigint NOT NULL
);
