package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/internal/metrics"
	"github.com/opsgate/opsgate/policy/redact"
)

// chat is one configured chat adapter, as serve runs it.
type chat struct {
	name string
	// owns reports whether a conversation key belongs to this adapter.
	owns   func(convKey string) bool
	sender core.EventSender
	run    func(ctx context.Context) error
	close  func() error
	// routes are mounted on server.listen (webhooks, Slack HTTP mode).
	routes map[string]http.Handler
	// health reports the adapter's connection to its platform (/readyz).
	health func() (ok bool, detail string)
	// notify shows an approval's card at a policy's notify target on this
	// platform (the part after "platform:").
	notify func(ctx context.Context, target string, a core.Approval) error
	// thread posts text as a new message at where (a channel or chat) and
	// returns the conversation that follows it; title names a Discord
	// thread. Schedules' fires run there.
	thread func(ctx context.Context, where, text, title string) (string, error)
	// lease, when set, names the lease this adapter's run needs: it
	// receives updates on one replica at a time (see leased).
	lease string
	// standby is true while another replica holds lease.
	standby *atomic.Bool
	// adapter is the platform's adapter, for optional abilities checked at
	// run time (incidents.go: incident.Place).
	adapter any
}

// healthOf returns the adapter's Health, an optional ability; an adapter
// without it counts as connected.
func healthOf(adapter any) func() (bool, string) {
	if h, ok := adapter.(interface{ Health() (bool, string) }); ok {
		return h.Health
	}
	return func() (bool, string) { return true, "no health check" }
}

// engineRef lets adapters be built before the engine that needs their
// senders; serve sets e before anything can call it. It counts what each
// decision attempt of an adapter came to in m (nil: not counted).
type engineRef struct {
	e *core.Engine
	m *metrics.Metrics
	// red redacts what Decide and Status hand the adapters to show: the
	// other door from the engine to the chats besides events (nil: the
	// built-in detectors).
	red *redact.Redactor
	// store is the store of e, for what adapters keep in it themselves
	// (a Telegram chat's current conversation).
	store core.Store
	// incidents maps an incident's thread to its conversation and back
	// (incidents.go; nil: no incidents).
	incidents *incidents
}

func (r *engineRef) Conversation(ctx context.Context, key string) (core.Conversation, error) {
	return r.store.Conversation(ctx, key)
}
func (r *engineRef) Conversations(ctx context.Context, f core.ConversationFilter) ([]core.Conversation, error) {
	return r.store.Conversations(ctx, f)
}

func (r *engineRef) Handle(ctx context.Context, in core.Inbound) error { return r.e.Handle(ctx, in) }
func (r *engineRef) Stop(ctx context.Context, key string) bool         { return r.e.Stop(ctx, key) }
func (r *engineRef) Decide(ctx context.Context, d core.Decision) (core.Approval, error) {
	return r.e.Decide(ctx, d)
}
func (r *engineRef) Status(ctx context.Context, key string) (core.Status, error) {
	return r.e.Status(ctx, key)
}

// as is the engine as one platform's adapter sees it: the people it passes
// on become identities "platform:id" (docs/design.md §11), which is what policies,
// approvers and quorums name. An id that already has the prefix (Telegram's
// adapter adds it itself) is kept.
func (r *engineRef) as(platform string) *platformEngine {
	return &platformEngine{ref: r, platform: platform}
}

type platformEngine struct {
	ref      *engineRef
	platform string
}

func (p *platformEngine) qualify(a core.Actor) core.Actor {
	if a.ID != "" && !strings.HasPrefix(a.ID, p.platform+":") {
		a.ID = p.platform + ":" + a.ID
	}
	return a
}

func (p *platformEngine) Handle(ctx context.Context, in core.Inbound) error {
	in.User = p.qualify(in.User)
	in.ConvKey = p.ref.incidents.inbound(ctx, in.ConvKey)
	return p.ref.Handle(ctx, in)
}
func (p *platformEngine) Stop(ctx context.Context, key string) bool {
	return p.ref.Stop(ctx, p.ref.incidents.inbound(ctx, key))
}
func (p *platformEngine) Decide(ctx context.Context, d core.Decision) (core.Approval, error) {
	d.Actor = p.qualify(d.Actor)
	a, err := p.ref.Decide(ctx, d)
	p.ref.m.Decided(p.platform, err)
	// The card of an incident's approval is in the incident's thread.
	a.ConvKey = p.ref.incidents.outbound(ctx, a.ConvKey)
	return p.ref.red.Approval(a), err
}
func (p *platformEngine) Status(ctx context.Context, key string) (core.Status, error) {
	st, err := p.ref.Status(ctx, p.ref.incidents.inbound(ctx, key))
	for i, a := range st.PendingApprovals {
		st.PendingApprovals[i] = p.ref.red.Approval(a)
	}
	return st, err
}

// buildChats makes the adapters the configuration turns on (config's On).
// They only check their configuration here; nothing touches the network
// until run. Their calls to the platforms are counted in eng.m, when set.
func buildChats(cfg *config.Config, log *slog.Logger, eng *engineRef) ([]chat, error) {
	var chats []chat
	if cfg.Telegram.On() {
		tc := cfg.Telegram
		ad, err := telegram.New(telegram.Config{
			Token: tc.Token, APIURL: tc.APIURL, WebhookURL: tc.WebhookURL, WebhookSecret: tc.WebhookSecret,
			AllowedUsers: tc.AllowedUsers, Approvers: tc.Approvers, Conversations: eng,
			Transport: eng.m.Transport("telegram", nil, metrics.APIMethod),
		}, eng.as("telegram"), log.With("adapter", "telegram"))
		if err != nil {
			return nil, err
		}
		c := chat{name: "telegram", owns: ad.Owns, sender: ad.Sender(), run: ad.Run, close: ad.Close, health: healthOf(ad), adapter: ad,
			notify: func(_ context.Context, target string, a core.Approval) error { return ad.Notify(target, a) },
			thread: func(ctx context.Context, where, text, _ string) (string, error) {
				return ad.StartThread(ctx, where, text)
			}}
		if p := ad.WebhookPath(); p != "" {
			c.routes = map[string]http.Handler{"POST " + p: ad.WebhookHandler()}
		} else {
			// One poller per bot token: getUpdates on two replicas would
			// split (and conflict over) the updates.
			c.lease = "telegram:" + strings.SplitN(tc.Token, ":", 2)[0]
		}
		chats = append(chats, c)
	}
	if cfg.Slack.On() {
		sc := cfg.Slack
		ad, err := slack.New(slack.Config{
			BotToken: sc.BotToken, AppToken: sc.AppToken, SigningSecret: sc.SigningSecret, APIURL: sc.APIURL,
			Channels: sc.Channels, AllowedUsers: sc.AllowedUsers, Approvers: sc.Approvers,
			Transport: eng.m.Transport("slack", nil, metrics.APIMethod),
		}, eng.as("slack"), log.With("adapter", "slack"))
		if err != nil {
			return nil, err
		}
		c := chat{name: "slack", owns: ad.Owns, sender: ad.Sender(), run: ad.Run, close: ad.Close, health: healthOf(ad), notify: ad.Notify, adapter: ad,
			thread: func(ctx context.Context, where, text, _ string) (string, error) {
				return ad.StartThread(ctx, where, text)
			}}
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
		}, eng.as("discord"), log, // discord.New names itself in the logger
			discord.WithTransport(eng.m.Transport("discord", nil, metrics.RESTRoute)))
		if err != nil {
			return nil, err
		}
		chats = append(chats, chat{name: "discord", owns: ad.Owns, sender: ad, run: ad.Run, close: ad.Close, health: healthOf(ad), adapter: ad,
			notify: func(_ context.Context, target string, a core.Approval) error { return ad.Notify(target, a) },
			thread: ad.StartThread,
			// One gateway session per bot.
			lease: "discord:" + cfg.Discord.ApplicationID})
	}
	return chats, nil
}

// subscribeChats subscribes each adapter to the events of the
// conversations it owns (the engine redacted them). An event of a
// conversation no adapter serves and that is not the API's (an approval of a bot that is no longer configured expiring) is
// an error: nobody will see it, and the engine logs and counts it as
// undelivered.
//
// An approval whose policy rule names notify targets ("telegram:12345678")
// is also shown there, as a card of its own (docs/design.md §11): posted while it
// waits, updated with each vote, and showing the outcome.
func subscribeChats(e *core.Engine, chats []chat) {
	for _, c := range chats {
		e.Subscribe("", c.sender, core.SubscribeOptions{Owns: c.owns})
	}
	byChat := ownedByAny(chats)
	// API conversations are followed by API streams, when anyone follows.
	owned := func(key string) bool { return byChat(key) || strings.HasPrefix(key, httpapi.ConvPrefix) }
	e.Subscribe("", core.SenderFunc(func(_ context.Context, ev core.Event) error {
		return fmt.Errorf("serve: no adapter serves conversation %q (event %s)", ev.ConvKey, ev.Type)
	}), core.SubscribeOptions{Owns: func(key string) bool { return !owned(key) }})
	e.Subscribe("", core.SenderFunc(func(ctx context.Context, ev core.Event) error {
		if !hasNotifyCard(ev) {
			return nil
		}
		return notifyCards(ctx, chats, ev)
	}), core.SubscribeOptions{})
}

// hasNotifyCard reports whether ev is an approval event with notify targets.
func hasNotifyCard(ev core.Event) bool {
	switch {
	case ev.Approval == nil || len(ev.Approval.Verdict.Notify) == 0:
		return false
	case ev.Type != core.EventToolAwaitingApproval && ev.Type != core.EventToolApproved && ev.Type != core.EventToolDenied:
		return false
	}
	return true
}

// notifyCards shows the approval of ev at its notify targets.
func notifyCards(ctx context.Context, chats []chat, ev core.Event) error {
	if !hasNotifyCard(ev) {
		return nil
	}
	var errs []error
	for _, target := range ev.Approval.Verdict.Notify {
		platform, where, _ := strings.Cut(target, ":")
		var to *chat
		for i := range chats {
			if chats[i].name == platform && chats[i].notify != nil {
				to = &chats[i]
			}
		}
		if to == nil {
			errs = append(errs, fmt.Errorf("serve: notify %s: %s is not enabled", target, platform))
			continue
		}
		if err := to.notify(ctx, where, *ev.Approval); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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
