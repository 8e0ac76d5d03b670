package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// Adapter connects one Telegram bot to the engine. Create it with New,
// subscribe it to the engine's events (it is a core.EventSender), then call
// Run with the engine; Close releases it. It is a chats.Chat.
type Adapter struct {
	cfg       Config
	log       *slog.Logger
	api       *tgbotapi.BotAPI
	botID     int64
	sender    *render.Sender
	allowed   map[int64]bool
	approvers map[int64]bool
	seen      *recent
	link      *render.Link // for Health

	mu       sync.Mutex
	eng      Engine              // set by Run or WebhookHandler
	username string              // the bot's @name, from getMe
	epochs   map[int64]string    // chat -> suffix of its current conversation (/new)
	refused  map[int64]time.Time // user -> last refusal
	// While polling, the first chat to need it reads every chat a /new
	// moved (load, once per Run); loaded says epochs then holds them all.
	load   *sync.Once
	loaded bool
	gen    uint64 // of epochs: one per polling Run
	// threadKnown and replies find the reply conversation a reply
	// continues (incidents.go).
	threadKnown func(ctx context.Context, convKey string) bool
	replies     *replyIndex
	// prep is the Prepare the next Run waits for (prepare.go).
	prep *prep
}

var (
	_ chats.Chat     = (*Adapter)(nil)
	_ chats.Healther = (*Adapter)(nil)
	_ chats.Notifier = (*Adapter)(nil)
	_ chats.Threader = (*Adapter)(nil)
	_ chats.Leased   = (*Adapter)(nil)
	_ chats.Router   = (*Adapter)(nil)
	_ chats.Preparer = (*Adapter)(nil)
)

// New checks cfg and returns an adapter. It makes no network call.
func New(cfg Config, log *slog.Logger) (*Adapter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	botID, _ := botIDOf(cfg.Token)
	// The library's constructors call getMe; building the value directly
	// keeps New free of network calls.
	api := &tgbotapi.BotAPI{Token: cfg.Token, Client: cfg.HTTPClient, Buffer: 100}
	api.SetAPIEndpoint(strings.ReplaceAll(cfg.APIURL, "%", "%%") + "/bot%s/%s")
	a := &Adapter{
		cfg: cfg, log: log.With("adapter", "telegram"), api: api, botID: botID,
		allowed: set(cfg.AllowedUsers), approvers: set(cfg.Approvers), seen: newRecent(4096),
		epochs: map[int64]string{}, refused: map[int64]time.Time{}, replies: newReplyIndex(),
		link: render.NewLink("polling"),
	}
	if cfg.WebhookURL != "" {
		a.link = render.NewLink("webhook")
	}
	a.sender = render.New(platform{a}, render.Options{Limiter: cfg.Limiter, Logger: a.log})
	return a, nil
}

func set(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// Sender returns the event sender that renders runs of Telegram
// conversations.
func (a *Adapter) Sender() *render.Sender { return a.sender }

// Send renders an event of a Telegram conversation (core.EventSender).
func (a *Adapter) Send(ctx context.Context, ev core.Event) error { return a.sender.Send(ctx, ev) }

// Platform is "telegram".
func (a *Adapter) Platform() string { return "telegram" }

// Lease names the lease polling needs: getUpdates on two replicas would
// split (and conflict over) the updates, so one poller runs per bot token.
// A webhook needs none.
func (a *Adapter) Lease() string {
	if a.cfg.WebhookURL != "" {
		return ""
	}
	return "telegram:" + strings.SplitN(a.cfg.Token, ":", 2)[0]
}

// Routes serves the webhook, when one is configured.
func (a *Adapter) Routes(e Engine) map[string]http.Handler {
	p := a.WebhookPath()
	if p == "" {
		return nil
	}
	return map[string]http.Handler{"POST " + p: a.WebhookHandler(e)}
}

// bind sets the engine that receives what people say and click.
func (a *Adapter) bind(e Engine) {
	a.mu.Lock()
	a.eng = e
	a.mu.Unlock()
}

// engine is the engine Run or WebhookHandler was given.
func (a *Adapter) engine() Engine {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.eng
}

// Owns reports whether a conversation key belongs to this bot; a router of
// events (and the engine's Recover) use it.
func (a *Adapter) Owns(convKey string) bool {
	return strings.HasPrefix(convKey, fmt.Sprintf("telegram:%d:", a.botID))
}

// WebhookPath is the path Telegram posts updates to (that of webhook_url),
// or "" when polling.
func (a *Adapter) WebhookPath() string {
	if a.cfg.WebhookURL == "" {
		return ""
	}
	u, _ := url.Parse(a.cfg.WebhookURL) // checked in New
	if u.Path == "" {
		return "/"
	}
	return u.Path
}

// Run receives updates until ctx ends and hands them to e: by long
// polling, or, with a webhook URL, by registering the webhook
// (WebhookHandler does the receiving). It returns nil when ctx ends, or an
// error Telegram will not get over (a revoked token).
func (a *Adapter) Run(ctx context.Context, e Engine) error {
	if e == nil {
		return errors.New("telegram: an engine is required")
	}
	a.bind(e)
	if a.cfg.WebhookURL == "" {
		a.forgetEpochs()
	}
	settled := a.prepared(ctx)
	name, err := a.me(ctx)
	for err != nil {
		var re *render.Error
		if errors.As(err, &re) && re.Kind == render.KindRejected {
			return fmt.Errorf("telegram: check telegram.token: %w", err)
		}
		a.link.Down(err)
		a.log.Warn("telegram: cannot reach the Bot API; retrying", "err", err)
		if !sleep(ctx, 5*time.Second) {
			return nil
		}
		name, err = a.me(ctx)
	}
	if len(a.allowed) == 0 {
		a.log.Warn("telegram.allowed_users is empty: the bot refuses everyone")
	}
	if !settled {
		a.settle(ctx)
	}
	if a.cfg.WebhookURL != "" {
		_, err := a.bot(ctx).MakeRequest("setWebhook", tgbotapi.Params{
			"url": a.cfg.WebhookURL, "secret_token": a.cfg.WebhookSecret,
			"allowed_updates": `["message","callback_query"]`,
		})
		if err != nil {
			return fmt.Errorf("telegram: set webhook: %w", a.classify("set webhook", err))
		}
		a.link.Up()
		a.log.Info("telegram: receiving updates by webhook", "bot", "@"+name, "path", a.WebhookPath())
		<-ctx.Done()
		return nil
	}
	// getMe answered: the first long poll may hold for PollTimeout before
	// it says more.
	a.link.Up()
	a.log.Info("telegram: receiving updates by long polling", "bot", "@"+name)
	return a.poll(ctx)
}

// me returns the bot's username, asking Telegram once.
func (a *Adapter) me(ctx context.Context) (string, error) {
	a.mu.Lock()
	name := a.username
	a.mu.Unlock()
	if name != "" {
		return name, nil
	}
	u, err := a.bot(ctx).GetMe()
	if err != nil {
		return "", a.classify("get me", err)
	}
	a.mu.Lock()
	a.username = u.UserName
	a.mu.Unlock()
	return u.UserName, nil
}

func (a *Adapter) setCommands(ctx context.Context) {
	cmds := tgbotapi.NewSetMyCommands(
		tgbotapi.BotCommand{Command: "help", Description: "What I can do"},
		tgbotapi.BotCommand{Command: "new", Description: "Start a fresh conversation"},
		tgbotapi.BotCommand{Command: "stop", Description: "Stop what I am doing"},
		tgbotapi.BotCommand{Command: "status", Description: "What is running and waiting for approval"},
	)
	if _, err := a.request(ctx, "set commands", cmds); err != nil {
		a.log.Warn("telegram: set commands", "err", err)
	}
}

// Close delivers what the sender still has (up to 10 s) and releases
// connections. Call it after Run returned and the engine shut down.
func (a *Adapter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.sender.Close(ctx)
	a.cfg.HTTPClient.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("telegram: close: %w", err)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Notify shows approval ap's card in the chat a policy's notify target
// names ("12345678" of telegram:12345678), in a conversation of its own
// beside the chat's: its buttons decide the request like the original
// card's, and it shows the outcome.
func (a *Adapter) Notify(_ context.Context, chat string, ap core.Approval) error {
	id, err := strconv.ParseInt(chat, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram: notify target %q: want a chat id", chat)
	}
	a.sender.Card(ConvKey(a.botID, id, "notify"), ap)
	return nil
}

// StartThread posts text in chat and returns a conversation of its own for
// what follows (a schedule's fire, docs/design.md §13): Telegram has no
// threads (title is not used), so the fire's run posts in the chat under
// that key, apart from the chat's current conversation.
func (a *Adapter) StartThread(ctx context.Context, chat, text, _ string) (string, error) {
	id, err := strconv.ParseInt(chat, 10, 64)
	if err != nil {
		return "", fmt.Errorf("telegram: start a thread in %q: not a chat id", chat)
	}
	key := ConvKey(a.botID, id, "s"+strconv.FormatInt(time.Now().UnixNano(), 36))
	a.sender.Say(key, text)
	return key, nil
}
