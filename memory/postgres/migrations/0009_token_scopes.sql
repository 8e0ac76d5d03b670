-- 0010_token_scopes: API tokens get scopes, an expiry and their last use
-- (docs/design.md §17). Tokens made before keep working: they get the default
-- scopes and never expire (NULL).
ALTER TABLE api_tokens ADD COLUMN scopes text NOT NULL DEFAULT 'read,write,approve';
ALTER TABLE api_tokens ADD COLUMN expires_at timestamptz;
ALTER TABLE api_tokens ADD COLUMN last_used_at timestamptz;

-- Visibility (docs/design.md §17) asks which conversations a person took part in.
CREATE INDEX inbound_user ON inbound (user_id, conv_key);
CREATE INDEX runs_requester ON runs (requester_id, conv_key);
CREATE INDEX approval_votes_person ON approval_votes (person, approval_id);
