-- 0009_memory_search: memory search filters each match by its seq, scope
-- and status; this index answers without reading the document's row.
CREATE INDEX memory_docs_search ON memory_docs (seq, status, scope_kind, scope_key);
