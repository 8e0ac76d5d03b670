// Package slacktest is an in-process fake of the Slack platform for
// opsgate's tests: an httptest Web API and a Socket Mode websocket server
// on one listener, recording everything the adapter does.
//
// # Web API
//
// [Server.APIURL] serves, form-encoded as Slack does, auth.test,
// apps.connections.open (answering the fake's own websocket URL),
// chat.postMessage, chat.update, chat.postEphemeral, conversations.replies
// and users.info. Messages are validated the way Slack validates them
// (section text at most 3,000 characters, at most 50 blocks, about 12,000
// characters of block text in all, button limits), stored per channel and
// thread, and shown as a reader would see them with [Message.Plain]. Every
// call is recorded with its arrival time ([Server.Calls]); a method can be
// made to answer 429 with Retry-After ([Server.RateLimit]) or to hold its
// callers until released ([Server.Hold]).
//
// # Socket Mode
//
// A client that opened a connection gets {"type":"hello"}, then the
// envelopes a test sends ([Server.SendEvent], [Server.SendCommand],
// [Server.SendClick]). The server sends websocket PING frames every
// PingInterval, as Slack does: slack-go's client reconnects when it gets
// none. Acks are recorded ([Server.WaitAck]). By default every message the
// bot posts is echoed back as a message event, as Slack does for apps
// subscribed to message.channels, so tests see that the bot ignores itself.
//
// # Payloads
//
// [Server.Mention], [Server.Say], [Server.SlashCommand] and [Server.Click]
// build payloads shaped like Slack's; for HTTP mode, [SignedRequest] signs a
// body with a signing secret and timestamp.
package slacktest
