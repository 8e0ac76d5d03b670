-- 0008_memory_docs: long-term memory documents (docs/design.md §14, docs.Store).
--
-- memory_docs holds each document as it stands; seq is its row id in
-- memory_fts. Tags, entities and source are JSON.
CREATE TABLE memory_docs (
	seq        INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	scope_kind TEXT NOT NULL,
	scope_key  TEXT NOT NULL,
	path       TEXT NOT NULL,
	title      TEXT NOT NULL,
	content    TEXT NOT NULL,
	type       TEXT NOT NULL,
	tags       TEXT NOT NULL, -- JSON array
	entities   TEXT NOT NULL, -- JSON object: kind -> values
	status     TEXT NOT NULL,
	trust      TEXT NOT NULL,
	source     TEXT NOT NULL, -- JSON docs.Source
	author     TEXT NOT NULL,
	version    INTEGER NOT NULL,
	sha256     TEXT NOT NULL,
	created_at INTEGER NOT NULL, -- unix microseconds
	updated_at INTEGER NOT NULL,
	UNIQUE (scope_kind, scope_key, path)
);

-- memory_versions is each document's append-only history: the document as
-- each version left it (docs.Document as JSON) and why it changed.
CREATE TABLE memory_versions (
	doc_id  TEXT NOT NULL,
	version INTEGER NOT NULL,
	note    TEXT NOT NULL,
	at      INTEGER NOT NULL,
	doc     TEXT NOT NULL,
	PRIMARY KEY (doc_id, version)
);

CREATE TRIGGER memory_versions_no_update BEFORE UPDATE ON memory_versions
BEGIN
	SELECT RAISE(ABORT, 'memory history is append-only: UPDATE is not allowed');
END;

CREATE TRIGGER memory_versions_no_delete BEFORE DELETE ON memory_versions
BEGIN
	SELECT RAISE(ABORT, 'memory history is append-only: DELETE is not allowed');
END;

-- INSERT OR REPLACE deletes the old row without firing DELETE triggers.
CREATE TRIGGER memory_versions_no_replace BEFORE INSERT ON memory_versions
WHEN EXISTS (SELECT 1 FROM memory_versions WHERE doc_id = NEW.doc_id AND version = NEW.version)
BEGIN
	SELECT RAISE(ABORT, 'memory history is append-only: a version cannot be written twice');
END;

-- memory_usage records which documents each run was given.
CREATE TABLE memory_usage (
	id       INTEGER PRIMARY KEY,
	doc_id   TEXT NOT NULL,
	conv_key TEXT NOT NULL,
	run_id   TEXT NOT NULL,
	score    REAL NOT NULL,
	at       INTEGER NOT NULL
);
CREATE INDEX memory_usage_doc ON memory_usage (doc_id, at, id);

-- memory_fts indexes title, content, tags and entity values (space
-- separated) of memory_docs, by seq. It is contentless: the text lives in
-- memory_docs only; SaveDocument deletes and inserts a document's row in
-- the transaction that changes it. unicode61 splits on anything but
-- letters and digits, so the entity value "payments-api" is found by
-- "payments" and by "api"; porter stems English ("restarting" finds
-- "restarts").
CREATE VIRTUAL TABLE memory_fts USING fts5(
	title, content, tags, entities,
	content = '', contentless_delete = 1,
	tokenize = 'porter unicode61'
);
