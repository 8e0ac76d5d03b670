-- 0003_conv_holders: which replica runs a conversation (docs/design.md §12). A
-- hold lives while its replica renews it; an expired one is free.
CREATE TABLE conv_holders (
	conv_key   text PRIMARY KEY,
	holder     text NOT NULL,
	expires_at timestamptz NOT NULL
);
CREATE INDEX conv_holders_holder ON conv_holders (holder);
