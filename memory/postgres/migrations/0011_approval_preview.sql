-- 0011_approval_preview: an approval keeps its preview (docs/design.md §18): what
-- the call would change as the card showed it, and the hash of what the
-- preview compared, read again right before an approved call runs. JSON,
-- '' for none (approvals of tools without a preview, and older ones).
ALTER TABLE approvals ADD COLUMN preview text NOT NULL DEFAULT '';
