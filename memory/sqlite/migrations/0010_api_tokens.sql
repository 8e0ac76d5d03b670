-- 0010_api_tokens: the HTTP API's bearer tokens (docs/design.md §15). Only the
-- SHA-256 of a token is stored; a revoked token keeps its row.
CREATE TABLE api_tokens (
	id         TEXT PRIMARY KEY,
	person     TEXT NOT NULL,
	hash       BLOB NOT NULL UNIQUE,
	created_at INTEGER NOT NULL, -- unix microseconds
	revoked_at INTEGER
);
