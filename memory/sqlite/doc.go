// Package sqlite is the embedded default store of opsgate: all durable state
// (conversations, transcripts, inbound messages, runs, checkpoints,
// approvals and the audit log) in one SQLite file, through
// modernc.org/sqlite, so the binary needs no cgo and no server.
//
// # Concurrency
//
// The file is opened in WAL mode with a busy timeout of 5 s. A Store keeps
// two connection pools: a single writer connection, through which every
// write goes, so writers of one process queue in Go instead of contending
// for the file lock; and a pool of read-only connections, which WAL lets run
// beside the writer. Write transactions begin IMMEDIATE, taking the write
// lock up front, so a transaction never has to upgrade a read lock, which
// is the case in which SQLite returns SQLITE_BUSY without waiting. Several
// processes (several Stores) may share one file: their writers then wait
// for each other under the busy timeout.
//
// One-shot operations are single statements: DecideApproval is an UPDATE
// guarded by status = 'pending', ClaimCheckpoint a DELETE … RETURNING.
//
// Every commit is durable (synchronous=FULL: an fsync of the WAL), which is
// what a write costs; Apply makes the writes of one core.Batch in a single
// transaction, so the engine pays for one per step of a run rather than one
// per write. The event log's commits (AppendEvents) are the exception: they
// run behind the runs and do not fsync; the next durable commit carries
// them (inLazyTx). Statements are prepared once per connection and kept.
//
// # Schema
//
// Migrations are SQL files embedded from migrations/, applied in order, each
// in its own transaction and recorded in schema_migrations. Open applies
// pending ones; a database migrated by a newer opsgate is refused. The audit
// table has triggers that reject UPDATE and DELETE. Open then compares the
// schema with the one the migrations make (CheckSchema) and refuses a
// database changed since, such as one whose audit triggers were dropped.
//
// Times are stored as unix microseconds (UTC), the precision PostgreSQL
// keeps, and come back in UTC. Raw JSON from the model is stored as JSON
// strings, so it comes back byte for byte even when it is malformed.
package sqlite
