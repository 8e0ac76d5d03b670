// Package telegram is the Telegram adapter of opsgate, over
// github.com/go-telegram-bot-api/telegram-bot-api/v5.
//
// Each private chat is a conversation ("telegram:<bot>:<chat>"); in groups
// the bot answers only commands and messages that mention it or reply to
// it. Only telegram.allowed_users may talk to the bot: anyone else gets one
// short refusal and nothing reaches the engine. Commands: /start, /help,
// /new (a fresh conversation), /stop and /status.
//
// Runs are rendered by adapters/render: a streamed draft edited in place in
// Telegram's HTML parse mode (with a plain-text fallback when Telegram
// rejects the entities), tool status lines, approval cards with
// Approve/Deny inline buttons whose callback data is a short reference
// ("a:<approval id>"), and a Stop button. Every callback is answered at
// once; a click from someone who may not decide gets an alert, and the
// engine audits the attempt.
//
// Updates come by long polling (the default) or, when a webhook URL is
// configured, by webhook, authenticated with the secret token Telegram
// sends in X-Telegram-Bot-Api-Secret-Token. When polling, the offset only
// moves past updates that were handed to the engine (which stores a message
// before it answers), so a shutdown or a store failure loses nothing; a
// redelivered update is processed once.
package telegram
