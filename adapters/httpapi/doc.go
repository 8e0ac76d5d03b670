// Package httpapi is opsgate's HTTP API (docs/design.md §15), mounted under
// /api/v1 on server.listen: JSON in and out, errors as
// {"error": {"code", "message"}}.
//
// # Authentication
//
// Every request carries "Authorization: Bearer <token>". Tokens are made
// by `opsgate token create --person NAME` ([NewToken]) and stored as a
// SHA-256 hash ([TokenStore]); a request's token is found by its hash and
// compared in constant time. A token acts as the identity "api:<person>",
// so the policy decides an API decision exactly as it decides a click in
// chat: a person without the role gets 403 with the policy's sentence.
// Tokens are never logged.
//
// # Access (docs/design.md §17)
//
// A token has scopes ([Scopes]) and an expiry; an expired one is 401
// token_expired. A token sees what its person may see ([Visibility], the
// policy; [Participation], the store): a conversation it may not see is
// 404 before any scope check, and lists leave it out; then a missing
// scope is 403 insufficient_scope. Both checks live in access.go.
//
// # What is served
//
// Conversations (with their messages and runs), pending approvals and
// decisions, stopping a run, the audit log, memory search and the
// schedules; and two Server-Sent Events streams:
//
//   - POST /api/v1/conversations/{key}/messages {"text"} sends a message
//     (as api:<person>) and streams the conversation's events until the
//     run it started or steered completes. Keys of conversations started
//     here are "api:<name>"; any existing key may be posted to.
//   - GET /api/v1/conversations/{key}/events follows a conversation.
//
// Each event is "id: <seq>", "event: <type>" and its JSON on one data
// line; an idle stream gets a ": heartbeat" comment every 15 s. The
// engine keeps every event (core.Engine.Events) as people were shown it,
// so a client reconnecting with Last-Event-ID (or ?after=N; ?run=ID
// replays one run) gets exactly what it missed, then the live events.
// Events the engine had to drop (its store down for longer than its
// buffer holds) are named by one "event: gap" frame, {"from": N, "to": M},
// where they were: a stream never misses an event silently.
// The streams of a conversation share one subscription to the engine
// (a hub), which encodes each event once, and each stream has a bounded
// queue of its own: a client that stops reading is cut off and never
// delays a run or a chat. The hub also reads the conversation's kept
// events every second, so a stream on one replica follows a run that
// another replica runs.
//
// What the engine hands out is safe to show already: events (its display
// filter) and the approvals of Decide and Status. What the API reads from
// the store itself (transcripts, approvals, runs, the audit log) passes
// the redactor the chats use ([Options.Redact]) on its way out, so a
// secret in a tool result never leaves through the API. Stream frames are
// events and are not redacted twice.
//
// # Bad input
//
// A body over 1 MiB is 413; malformed JSON, or a key twice in one object
// at any depth, is 400 bad_json; an unknown field is 400 unknown_field;
// an unknown conversation, run or approval is 404 (also for following
// one: a stream of nothing would wait for ever); a known path with
// another method is 405 method_not_allowed with Allow; a bad
// "api:<name>" is 400 invalid_key. None of them stores anything, and a
// stream starts only once its request is good.
//
// # Retries
//
// A message may carry an Idempotency-Key (docs/design.md §16, see idempotency.go):
// the store remembers it for a day with the run it named before running,
// so a repeat with the same body is answered with that run, replayed and
// followed, on any replica, and runs nothing.
//
// # Console
//
// [Console] serves the web console at / (files embedded from console/,
// plain JavaScript modules, no framework or CDN). The page loads without
// a token, asks for one, keeps it in the tab's sessionStorage and calls
// this API with it like any client; it renders every string as text,
// never as markup, under a CSP that allows no inline script or style.
package httpapi
