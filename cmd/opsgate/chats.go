package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/config"
)

// chat is one configured chat adapter, as serve runs it.
type chat struct {
	name string
	// owns reports whether a conversation key belongs to this adapter.
	owns func(convKey string) bool
	// mayDecide is the adapter's approver rule (requester or its approvers).
	mayDecide func(core.Approval, core.Actor) bool
	sender    core.EventSender
	run       func(ctx context.Context) error
	close     func() error
	// routes are mounted on server.listen (webhooks, Slack HTTP mode).
	routes map[string]http.Handler
}

// engineRef lets adapters be built before the engine that needs their
// senders; serve sets e before anything can call it.
type engineRef struct{ e *core.Engine }

func (r *engineRef) Handle(ctx context.Context, in core.Inbound) error { return r.e.Handle(ctx, in) }
func (r *engineRef) Stop(ctx context.Context, key string) bool         { return r.e.Stop(ctx, key) }
func (r *engineRef) Decide(ctx context.Context, d core.Decision) (core.Approval, error) {
	return r.e.Decide(ctx, d)
}
func (r *engineRef) Status(ctx context.Context, key string) (core.Status, error) {
	return r.e.Status(ctx, key)
}

// buildChats makes the adapters the configuration turns on (config's On).
// They only check their configuration here; nothing touches the network
// until run.
func buildChats(cfg *config.Config, log *slog.Logger, eng *engineRef) ([]chat, error) {
	var chats []chat
	if cfg.Telegram.On() {
		tc := cfg.Telegram
		ad, err := telegram.New(telegram.Config{
			Token: tc.Token, APIURL: tc.APIURL, WebhookURL: tc.WebhookURL, WebhookSecret: tc.WebhookSecret,
			AllowedUsers: tc.AllowedUsers, Approvers: tc.Approvers,
		}, eng, log.With("adapter", "telegram"))
		if err != nil {
			return nil, err
		}
		c := chat{name: "telegram", owns: ad.Owns, mayDecide: ad.MayDecide, sender: ad.Sender(), run: ad.Run, close: ad.Close}
		if p := ad.WebhookPath(); p != "" {
			c.routes = map[string]http.Handler{"POST " + p: ad.WebhookHandler()}
		}
		chats = append(chats, c)
	}
	if cfg.Slack.On() {
		sc := cfg.Slack
		ad, err := slack.New(slack.Config{
			BotToken: sc.BotToken, AppToken: sc.AppToken, SigningSecret: sc.SigningSecret, APIURL: sc.APIURL,
			Channels: sc.Channels, AllowedUsers: sc.AllowedUsers, Approvers: sc.Approvers,
		}, eng, log.With("adapter", "slack"))
		if err != nil {
			return nil, err
		}
		c := chat{name: "slack", owns: ad.Owns, mayDecide: ad.MayDecide, sender: ad.Sender(), run: ad.Run, close: ad.Close}
		if !ad.SocketMode() {
			c.routes = map[string]http.Handler{"/slack/": ad.Handler()}
		}
		chats = append(chats, c)
	}
	if cfg.Discord.On() {
		dc := cfg.Discord
		ad, err := discord.New(discord.Config{
			Token: dc.Token, ApplicationID: dc.ApplicationID, APIURL: dc.APIURL,
			Guilds: dc.Guilds, Channels: dc.Channels, AllowedUsers: dc.AllowedUsers, Approvers: dc.Approvers,
		}, eng, log) // discord.New names itself in the logger
		if err != nil {
			return nil, err
		}
		chats = append(chats, chat{name: "discord", owns: ad.Owns, mayDecide: ad.MayDecide, sender: ad, run: ad.Run, close: ad.Close})
	}
	return chats, nil
}

// eventRouter sends each event to the adapter that owns its conversation.
func eventRouter(chats []chat, log *slog.Logger) core.EventSender {
	return core.SenderFunc(func(ctx context.Context, ev core.Event) error {
		for _, c := range chats {
			if c.owns(ev.ConvKey) {
				return c.sender.Send(ctx, ev)
			}
		}
		log.Debug("event for a conversation no adapter serves", "type", ev.Type, "conv", ev.ConvKey)
		return nil
	})
}

// approverRule asks the adapter that owns the conversation; conversations
// of no adapter (the terminal) are decided by their requester only.
func approverRule(chats []chat) func(core.Approval, core.Actor) bool {
	return func(a core.Approval, actor core.Actor) bool {
		for _, c := range chats {
			if c.owns(a.ConvKey) {
				return c.mayDecide(a, actor)
			}
		}
		return actor.ID == a.Requester.ID
	}
}

// ownedByAny reports whether some adapter serves the conversation.
func ownedByAny(chats []chat) func(string) bool {
	return func(key string) bool {
		for _, c := range chats {
			if c.owns(key) {
				return true
			}
		}
		return false
	}
}
