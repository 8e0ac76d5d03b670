-- 0005_audit_chain: the audit hash chain (docs/design.md §11). Each entry stores
-- the SHA-256 of the entry before it and its own (core.AuditEntry.ChainHash),
-- computed by opsgate in the transaction that appends it. Entries written
-- before this migration keep empty hashes: the chain starts at the first
-- entry written after it, and `opsgate audit verify` accepts unhashed
-- entries only before that one.
ALTER TABLE audit ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN hash TEXT NOT NULL DEFAULT '';
