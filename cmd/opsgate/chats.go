package main

import (
	"log/slog"
	"strings"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/internal/metrics"
)

// buildChats makes the set of adapters the configuration turns on
// (config's On), with the log target of schedules routed beside them.
// They only check their configuration here; nothing touches the network
// until the set runs. Their calls to the platforms are counted in m, when
// set.
func buildChats(cfg *config.Config, log *slog.Logger, m *metrics.Metrics) (*chats.Set, error) {
	var list []chats.Chat
	if cfg.Telegram.On() {
		tc := cfg.Telegram
		ad, err := telegram.New(telegram.Config{
			Token: tc.Token, APIURL: tc.APIURL, WebhookURL: tc.WebhookURL, WebhookSecret: tc.WebhookSecret,
			AllowedUsers: tc.AllowedUsers, Approvers: tc.Approvers,
			Transport: m.Transport("telegram", nil, metrics.APIMethod),
		}, log.With("adapter", "telegram"))
		if err != nil {
			return nil, err
		}
		list = append(list, ad)
	}
	if cfg.Slack.On() {
		sc := cfg.Slack
		ad, err := slack.New(slack.Config{
			BotToken: sc.BotToken, AppToken: sc.AppToken, SigningSecret: sc.SigningSecret, APIURL: sc.APIURL,
			Channels: sc.Channels, AllowedUsers: sc.AllowedUsers, Approvers: sc.Approvers,
			Transport: m.Transport("slack", nil, metrics.APIMethod),
		}, log.With("adapter", "slack"))
		if err != nil {
			return nil, err
		}
		list = append(list, ad)
	}
	if cfg.Discord.On() {
		dc := cfg.Discord
		ad, err := discord.New(discord.Config{
			Token: dc.Token, ApplicationID: dc.ApplicationID, APIURL: dc.APIURL,
			Guilds: dc.Guilds, Channels: dc.Channels, AllowedUsers: dc.AllowedUsers, Approvers: dc.Approvers,
		}, log, // discord.New names itself in the logger
			discord.WithTransport(m.Transport("discord", nil, metrics.RESTRoute)))
		if err != nil {
			return nil, err
		}
		list = append(list, ad)
	}
	set := chats.NewSet(list...)
	set.Logger = log
	// Each decision attempt of an adapter is counted in m.
	set.Options.Decided = m.Decided
	set.Route(chats.LogChat(log))
	return set, nil
}

// serveChats gives set the store's leases and subscribes it to the
// engine's events. API conversations are followed by API streams, when
// anyone follows.
func serveChats(set *chats.Set, a *app) {
	set.Leaser, _ = a.store.(core.Leaser)
	set.Subscribe(a.engine, func(key string) bool { return strings.HasPrefix(key, httpapi.ConvPrefix) })
}
