// Package discord is opsgate's Discord adapter, over
// github.com/bwmarrin/discordgo.
//
// # Conversations
//
// A conversation is a thread, keyed "discord:<guild>:<thread>" (see
// [ConvKey]); a direct message is "discord:@me:<channel>". Mentioning the
// bot in an allowed channel starts a thread on that message, named after
// the request, and the run happens in the thread; later messages in the
// thread continue the conversation without a mention. /opsgate request
// does the same from a slash command; /opsgate stop and /opsgate status act
// on the thread they are used in. "stop" as a message stops the run too.
// Once a conversation has had three exchanges, the engine's model-written
// title (conversation.title.generated) renames the thread, in the
// background; the title a conversation starts with is its request, which
// names the thread already. Threads somebody else started keep their names.
//
// # Gateway
//
// The adapter identifies with the Guilds, Guild Messages, Direct Messages
// and Message Content intents. Handlers only queue work: messages run one
// at a time per channel, in order; interactions run at once, because
// Discord forgets one that is not answered within 3 s (each is answered
// with a deferred response first). The adapter runs the gateway connection
// itself (discordgo is used for REST, types and its channel state): each
// connection's goroutines end before the next connection is dialled, so a
// lost connection can never take its successor down with it. A lost
// connection, Discord's op 7 Reconnect, and a zombie connection (a
// heartbeat not acknowledged by the next one) are resumed at the session's
// resume_gateway_url; Discord replays what it dispatched meanwhile, and a
// replayed message is handled once (the message or interaction id is the
// engine's inbound id). A session Discord invalidated is identified anew
// after 1 to 5 s; nothing reconnects after Run has returned.
//
// # Rendering
//
// Runs are rendered by package render: one draft per run edited as text
// streams (at least 1.2 s apart, and never more than 5 message writes per
// 5 s in a channel), 2,000-character messages without a split code fence,
// and approval cards with Approve/Deny buttons whose custom_id is
// "a:<approval id>" or "d:<approval id>", never the arguments. A click is
// decided by the engine's policy (core.Policy: without a policy file the
// requester or discord.approvers); a refused click is told privately and audited by the
// engine, and the card shows the outcome once decided.
//
// # Rate limits and endpoints
//
// discordgo's retry-forever on 429 is off: a 429 reaches render's limiter
// as a rate limit with Discord's retry_after. REST and gateway discovery
// go to discord.api_url through the adapter's HTTP client, without
// touching discordgo's package-level endpoint variables.
package discord
