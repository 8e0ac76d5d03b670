// Package render turns the events of a run (core.Event) into chat messages on
// any platform that can post a message, edit it and show buttons. Slack,
// Telegram and Discord adapters supply a [Platform]; render does the rest, so
// that every platform shows a run the same way (docs/design.md §6):
//
//   - one draft message per run, edited as tokens stream in: latest text
//     wins, at most one call in flight per conversation, a minimum interval
//     between edits and a short debounce before the first post;
//   - at the platform's length limit the draft continues in a new message,
//     never cut inside a code fence ([Split]);
//   - one status line per tool call, a Stop button while the run is active,
//     and the final answer edited into the draft in place;
//   - a separate approval card per request with Approve/Deny buttons, edited
//     to its outcome when it is decided;
//   - one [Limiter] per bot token shared by every conversation, honouring the
//     platform's retry-after; under pressure drafts are coalesced harder while
//     final answers and approval cards still go out.
//
// [Sender.Send] never blocks on the platform: it updates the conversation's
// state and wakes a per-conversation worker that does the calls. A platform
// failure is logged and counted, never returned to the run.
//
// # Platform errors
//
// A platform classifies its failures with [Error]: rate limited (retry
// after), formatting rejected (render resends the text plain), rejected
// (definitive: nothing happened) or, for any other error, ambiguous. A post
// that failed ambiguously is never blindly re-sent, so a timeout cannot
// produce a duplicate message.
//
// # Conformance
//
// Package rendertest holds the sender conformance suite every adapter runs
// against its own platform fake.
package render
