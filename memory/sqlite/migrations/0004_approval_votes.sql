-- 0004_approval_votes: policies (docs/design.md §11). An approval keeps the verdict
-- the policy gave when it was asked (who may decide, the quorum) as JSON,
-- and collects votes: one per person (UNIQUE), so a quorum counts distinct
-- people whatever platform they click on. Votes are part of the record of
-- who decided, so like the audit log they are never changed or removed.
ALTER TABLE approvals ADD COLUMN verdict TEXT NOT NULL DEFAULT '';

CREATE TABLE approval_votes (
	seq         INTEGER PRIMARY KEY,
	approval_id TEXT NOT NULL,
	person      TEXT NOT NULL,
	actor_id    TEXT NOT NULL,
	actor_name  TEXT NOT NULL,
	approve     INTEGER NOT NULL,
	reason      TEXT NOT NULL,
	at          INTEGER,
	UNIQUE (approval_id, person)
);

CREATE TRIGGER approval_votes_no_update BEFORE UPDATE ON approval_votes
BEGIN
	SELECT RAISE(ABORT, 'approval votes are append-only: UPDATE is not allowed');
END;

CREATE TRIGGER approval_votes_no_delete BEFORE DELETE ON approval_votes
BEGIN
	SELECT RAISE(ABORT, 'approval votes are append-only: DELETE is not allowed');
END;
