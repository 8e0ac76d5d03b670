// Package storetest is the conformance suite every [core.Store] must pass:
// memory/sqlite runs it on a temporary file, memory/postgres on a throw-away
// database. A store is done when [Run] passes.
//
// The suite talks to a store only through the core.Store interface, so what
// it demands is what the engine may rely on, whatever the database:
//
//   - Times are kept to the millisecond or better and compared as instants
//     (a store may return them in any location; UTC is customary). The zero
//     time.Time round-trips as zero.
//   - Raw JSON (tool-call arguments, tool input schemas, approval arguments)
//     comes back byte for byte, including malformed JSON: a model can emit
//     broken arguments, and the transcript must still hold exactly what it
//     said. Nil and empty slices are not told apart.
//   - Text never contains NUL bytes (PostgreSQL cannot store them), so the
//     suite does not send any.
//   - Conversations come into being on first use, by any method that names
//     them; a conversation nobody wrote to has an empty transcript.
//   - Every "exactly once" promise (inbound dedupe, ClaimCheckpoint,
//     DecideApproval) is checked with concurrent callers, as the engine and
//     several opsgate processes will call it.
//   - Apply is one transaction: each part of a batch reads back as if its
//     own method had written it, and a batch with a failing part leaves
//     nothing behind.
//
// Subtests run in parallel, each on its own fresh store.
package storetest
