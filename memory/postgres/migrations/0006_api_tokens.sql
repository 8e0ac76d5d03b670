-- 0006_api_tokens: the HTTP API's bearer tokens (docs/design.md §15). Only the
-- SHA-256 of a token is stored; a revoked token keeps its row.
CREATE TABLE api_tokens (
	id         text PRIMARY KEY,
	person     text NOT NULL,
	hash       bytea NOT NULL UNIQUE,
	created_at timestamptz NOT NULL,
	revoked_at timestamptz
);
