-- 0005_memory_docs: long-term memory (docs/design.md §14, memory/docs): documents
-- as they stand, their append-only history and the record of which run
-- was given which document.

-- A document's latest version. keywords is its tags and entity values as
-- text, written by the store (a generated column may only use immutable
-- expressions, and jsonb-to-text is not one); search is what full-text
-- retrieval matches and ranks: the title weighs most, then keywords, then
-- the content. scope is what a search filters on: a column of its own has
-- statistics, so the planner knows that most documents are the
-- workspace's.
--
-- A row stays in the table up to 8 kB (toast_tuple_target), the search
-- vector in it rather than in TOAST (storage main: longer content moves
-- out first), so that ranking a candidate reads one page, not three.
CREATE TABLE memory_docs (
	id         text PRIMARY KEY,
	scope_kind text NOT NULL,
	scope_key  text NOT NULL,
	path       text NOT NULL,
	title      text NOT NULL,
	content    text NOT NULL,
	type       text NOT NULL,
	tags       jsonb NOT NULL,
	entities   jsonb NOT NULL,
	keywords   text NOT NULL,
	status     text NOT NULL,
	trust      text NOT NULL,
	source     jsonb NOT NULL,
	author     text NOT NULL,
	version    integer NOT NULL,
	sha256     text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	scope      text GENERATED ALWAYS AS (scope_kind || ':' || scope_key) STORED,
	search     tsvector GENERATED ALWAYS AS (
		setweight(to_tsvector('english', title), 'A') ||
		setweight(to_tsvector('english', keywords), 'B') ||
		setweight(to_tsvector('english', content), 'C')) STORED,
	UNIQUE (scope_kind, scope_key, path)
) WITH (toast_tuple_target = 8160);
ALTER TABLE memory_docs ALTER COLUMN search SET STORAGE MAIN;
CREATE INDEX memory_docs_search ON memory_docs USING GIN (search);

-- How many documents hold each lexeme of the search column (the row of
-- the empty lexeme counts the documents), kept with every save: a search
-- matches on its rarer terms, so that common words never make it rank
-- most of the table (memory/postgres search.go).
CREATE TABLE memory_lexemes (
	lexeme text PRIMARY KEY,
	ndocs  integer NOT NULL
);

-- Every version of every document, as that version left it: never changed
-- or removed.
CREATE TABLE memory_versions (
	doc_id     text NOT NULL,
	version    integer NOT NULL,
	scope_kind text NOT NULL,
	scope_key  text NOT NULL,
	path       text NOT NULL,
	title      text NOT NULL,
	content    text NOT NULL,
	type       text NOT NULL,
	tags       jsonb NOT NULL,
	entities   jsonb NOT NULL,
	status     text NOT NULL,
	trust      text NOT NULL,
	source     jsonb NOT NULL,
	author     text NOT NULL,
	sha256     text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	note       text NOT NULL,
	at         timestamptz NOT NULL,
	PRIMARY KEY (doc_id, version)
);
CREATE TRIGGER memory_versions_append_only BEFORE UPDATE OR DELETE ON memory_versions
	FOR EACH ROW EXECUTE FUNCTION opsgate_append_only();
CREATE TRIGGER memory_versions_no_truncate BEFORE TRUNCATE ON memory_versions
	FOR EACH STATEMENT EXECUTE FUNCTION opsgate_append_only();

-- Which documents each run was given. id orders records of the same time.
CREATE TABLE memory_usage (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	doc_id   text NOT NULL,
	conv_key text NOT NULL,
	run_id   text NOT NULL,
	score    double precision NOT NULL,
	at       timestamptz NOT NULL
);
CREATE INDEX memory_usage_doc ON memory_usage (doc_id, at DESC, id DESC);
