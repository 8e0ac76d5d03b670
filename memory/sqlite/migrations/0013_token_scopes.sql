-- 0014_token_scopes: API tokens get scopes, an expiry and their last use
-- (docs/design.md §17). Tokens made before keep working: they get the default
-- scopes and never expire. expires_at and last_used_at are unix
-- microseconds, NULL for never.
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT 'read,write,approve';
ALTER TABLE api_tokens ADD COLUMN expires_at INTEGER;
ALTER TABLE api_tokens ADD COLUMN last_used_at INTEGER;

-- Visibility (docs/design.md §17) asks which conversations a person took part in.
CREATE INDEX inbound_user ON inbound (user_id, conv_key);
CREATE INDEX runs_requester ON runs (requester_id, conv_key);
CREATE INDEX approval_votes_person ON approval_votes (person, approval_id);
