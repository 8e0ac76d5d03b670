package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// Engine is what the adapter calls on the engine. Its methods return
// quickly: runs proceed in the background and report through the
// adapter's Send.
type Engine = chats.Engine

// intents are the gateway events the adapter needs: guild messages and
// DMs with their content (Message Content is privileged: it must be
// enabled in the developer portal), and guilds for threads in the state.
const intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentsDirectMessages | discordgo.IntentMessageContent

// Option tunes an Adapter.
type Option func(*Adapter)

// WithLimits replaces Discord's render limits (tests use shorter intervals).
func WithLimits(l render.Limits) Option { return func(a *Adapter) { a.limits = l } }

// WithLimiter shares an outbound limiter; by default the adapter has its
// own for its bot token.
func WithLimiter(l *render.Limiter) Option { return func(a *Adapter) { a.limiter = l } }

// WithTransport carries the REST calls (gateway discovery included) over
// rt, to count them for instance; the rewrite to discord.api_url stays in
// front of it, so rt sees the URLs actually called.
func WithTransport(rt http.RoundTripper) Option { return func(a *Adapter) { a.transport = rt } }

// Adapter connects opsgate to Discord: it receives mentions, thread
// messages, DMs, the /opsgate command and button clicks through the
// gateway, hands them to the engine, and renders the engine's events into
// the conversation's thread. It is a core.EventSender for "discord:" keys.
type Adapter struct {
	cfg     Config
	log     *slog.Logger
	dg      *discordgo.Session
	limits  render.Limits
	limiter *render.Limiter
	out     *render.Sender
	// transport is WithTransport's; link is the gateway's state for Health.
	transport http.RoundTripper
	link      *render.Link

	places *placeCache
	seen   *seenSet
	queues *queues
	// names and renameQueue serve thread renames (titles.go).
	names       *threadNames
	renameQueue *queues
	// gwURL is the gateway's address, once asked (Run's goroutine only).
	gwURL string
	// ctx is the adapter's lifetime, not a request's: it bounds the work
	// of event handlers and ends at Close.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	engine  Engine
	botID   string
	appID   string
	running bool
	closing bool           // Run is ending: events are no longer taken
	work    sync.WaitGroup // events being handled; Add only under mu while !closing
	closed  bool           // Close has begun: no more renames
	renames sync.WaitGroup // thread renames going on; Add only under mu while !closed
}

var _ core.EventSender = (*Adapter)(nil)

var (
	_ chats.Chat     = (*Adapter)(nil)
	_ chats.Healther = (*Adapter)(nil)
	_ chats.Notifier = (*Adapter)(nil)
	_ chats.Threader = (*Adapter)(nil)
	_ chats.Leased   = (*Adapter)(nil)
)

// New checks cfg and returns an adapter; it touches no network. The engine
// comes with Run.
func New(cfg Config, log *slog.Logger, opts ...Option) (*Adapter, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	dg, err := discordgo.New("Bot " + cfg.Token)
	if err != nil {
		return nil, fmt.Errorf("discord: new session: %w", err)
	}
	dg.Dialer = &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 15 * time.Second}
	// 429s go back to render's limiter (or withRetry), which honours
	// retry_after under a context; a 502 is not re-sent blindly, because a
	// message post may have landed.
	dg.ShouldRetryOnRateLimit = false
	dg.MaxRestRetries = 0
	// The adapter runs the gateway connection itself (see gateway.go);
	// dg.Open is never called. Handlers only queue work, in gateway order.
	dg.ShouldReconnectOnError = false
	dg.Identify.Intents = intents

	a := &Adapter{
		cfg: cfg, log: log.With("adapter", "discord"), dg: dg,
		limits: DefaultLimits, appID: cfg.ApplicationID,
		places: newPlaceCache(), seen: newSeenSet(4096), queues: newQueues(),
		names: newThreadNames(), renameQueue: newQueues(),
		link: render.NewLink("gateway"),
	}
	for _, o := range opts {
		o(a)
	}
	dg.Client = newHTTPClient(cfg.APIURL, a.transport)
	if a.limiter == nil {
		// Discord allows a bot 50 requests per second overall.
		a.limiter = render.NewLimiter(render.LimiterConfig{Rate: 40})
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.out = render.New(newPlatform(dg, a.limits), render.Options{Limiter: a.limiter, Logger: a.log})
	return a, nil
}

// Platform is "discord".
func (a *Adapter) Platform() string { return "discord" }

// Lease names the lease of the gateway session: one per bot.
func (a *Adapter) Lease() string { return "discord:" + a.cfg.ApplicationID }

// Send implements core.EventSender: it renders the event into its
// conversation's thread, and renames a thread the bot started after the
// conversation's title (conversation.title.generated). It never blocks on
// Discord.
func (a *Adapter) Send(ctx context.Context, ev core.Event) error {
	if ev.Type == core.EventConversationTitle {
		a.retitle(ev.ConvKey, ev.Text)
	}
	return a.out.Send(ctx, ev)
}

// Sender is the renderer behind Send (for Flush, Say and Stats).
func (a *Adapter) Sender() *render.Sender { return a.out }

// Run connects to the gateway, registers the /opsgate command and hands
// events to e until ctx ends; a dropped connection is resumed. It returns an
// error only when Discord refuses the bot (token, intents). Close the
// adapter after Run has returned and the engine has shut down.
func (a *Adapter) Run(ctx context.Context, e Engine) error {
	a.mu.Lock()
	switch {
	case e == nil:
		a.mu.Unlock()
		return errors.New("discord: Run without an engine")
	case a.running:
		a.mu.Unlock()
		return errors.New("discord: Run called twice")
	}
	a.engine, a.running = e, true
	a.mu.Unlock()

	// /opsgate is registered once the first READY has told the
	// application id, while events are already being handled.
	var cmds sync.WaitGroup
	var once sync.Once
	err := a.gateway(ctx, func() {
		once.Do(func() {
			cmds.Add(1)
			go func() {
				defer cmds.Done()
				a.registerCommands(ctx)
			}()
		})
	})
	cmds.Wait()
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	// Let events already taken finish (a thread being created, a click
	// being decided) so that none is half done.
	done := make(chan struct{})
	go func() { a.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		a.log.Warn("events still being handled at shutdown")
	}
	return err
}

// Owns reports whether a conversation key is a Discord one; a router of
// events uses it.
func (a *Adapter) Owns(convKey string) bool { return strings.HasPrefix(convKey, keyPrefix) }

// closeTimeout bounds how long Close delivers what is left.
const closeTimeout = 10 * time.Second

// Close delivers what the renderer still has and lets thread renames
// finish (up to 10 s together), then stops; Send fails afterwards. Call it
// after Run returned and the engine shut down.
func (a *Adapter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	err := a.out.Close(ctx)
	renamed := make(chan struct{})
	go func() { a.renames.Wait(); close(renamed) }()
	select {
	case <-renamed:
	case <-ctx.Done():
		a.log.Warn("thread renames still going at close")
	}
	a.cancel()
	if err != nil {
		return fmt.Errorf("discord: close: %w", err)
	}
	return nil
}

// engineOf returns the engine.
func (a *Adapter) engineOf() Engine {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.engine
}

// bot returns the bot's user id, known from READY.
func (a *Adapter) bot() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botID
}

// track counts an event as being handled, unless Run is ending.
func (a *Adapter) track() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.work.Add(1)
	return true
}

// Notify shows approval ap's card in the channel a policy's notify target
// names (discord:<channel>): its buttons decide the request like the
// original card's, and it shows the outcome.
func (a *Adapter) Notify(_ context.Context, channel string, ap core.Approval) error {
	if channel == "" {
		return errors.New("discord: notify target without a channel id")
	}
	a.out.Card(ConvKey("", channel), ap)
	return nil
}

// postInChannel posts text in channel and returns the channel (for its
// guild) and the message, on which a thread can then be opened.
func (a *Adapter) postInChannel(ctx context.Context, channel, text string) (ch *discordgo.Channel, msg *discordgo.Message, err error) {
	err = withRetry(ctx, func() error {
		var err error
		ch, err = a.dg.Channel(channel, discordgo.WithContext(ctx))
		return err
	})
	if err == nil {
		err = withRetry(ctx, func() error {
			var err error
			msg, err = a.dg.ChannelMessageSend(channel, text, discordgo.WithContext(ctx))
			return err
		})
	}
	return ch, msg, err
}

// StartThread posts text in channel, opens a thread on it named title, and
// returns the thread's conversation: a schedule's fire runs there
// (docs/design.md §13).
func (a *Adapter) StartThread(ctx context.Context, channel, text, title string) (string, error) {
	ch, msg, err := a.postInChannel(ctx, channel, text)
	if err != nil {
		return "", fmt.Errorf("discord: start a thread in %s: %w", channel, err)
	}
	thread, err := a.startThread(ctx, channel, msg.ID, title, text)
	if err != nil {
		return "", fmt.Errorf("discord: start a thread in %s: %w", channel, err)
	}
	return ConvKey(ch.GuildID, thread), nil
}
