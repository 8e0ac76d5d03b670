// Package slack is opsgate's Slack adapter, over github.com/slack-go/slack.
//
// # Conversations
//
// A conversation is a thread: its key is "slack:<team>:<channel>:<thread_ts>"
// ([ConvKey]). Mentioning the bot in a channel starts a thread on that
// message (or continues the thread the mention is in); replies in a thread
// the bot is part of continue it without a mention; a direct message
// starts a thread the same way. "/opsgate <request>" posts a visible root
// message ("@alice asked: …") and runs in its thread; "/opsgate stop",
// "/opsgate status" and "/opsgate help" answer privately. Saying "stop" in
// a thread, or pressing the Stop button, stops its run.
//
// # Transport
//
// With an app-level token the adapter uses Socket Mode ([Adapter.Run]);
// otherwise Slack posts to [Adapter.Handler] (HTTP mode), where every
// request must carry a valid signature made with the signing secret and a
// timestamp within five minutes. Both feed the same handlers. Every
// envelope and request is acknowledged before any work starts (Slack
// allows 3 seconds); redeliveries are recognised by event id (and
// envelope id) and processed once. Messages from bots, the adapter's own
// included, are ignored.
//
// # Rendering
//
// Runs are rendered by the shared renderer (package render) through
// [Sender], the adapter's core.EventSender: one streamed message per run,
// edited with chat.update at most once a second, its Markdown converted to
// mrkdwn ([Mrkdwn]) in section blocks of at most 3,000 characters, and
// continued in a new threaded message past [MaxText]. Approval requests
// are cards with Approve (primary) and Deny (danger) buttons; a destructive
// request's Approve button carries Slack's confirm dialog. A click is
// looked up by approval id and decided by the engine, which checks the
// clicker against its policy (core.Policy); refusals are answered privately and
// audited by the engine.
//
// # Access
//
// The bot answers in the channels of Config.Channels ("*": every channel
// it is in) and in direct messages from Config.AllowedUsers; when
// AllowedUsers is set, only those people may use it anywhere. Everyone
// else gets a short private refusal and nothing runs.
package slack
