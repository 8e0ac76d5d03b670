package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/slack-go/slack"
)

// Engine is what the adapter calls on the engine.
type Engine = chats.Engine

// handlerTimeout bounds the work for one event, command or click (after it
// was acknowledged).
const handlerTimeout = 2 * time.Minute

// Adapter connects Slack to an Engine. Construct it with New; Run
// receives (Socket Mode) or Handler serves (HTTP mode); Send renders. It
// is a chats.Chat.
type Adapter struct {
	cfg       Config
	log       *slog.Logger
	api       *slack.Client
	hc        *http.Client
	lim       *render.Limiter
	sender    *Sender
	channels  idSet
	users     idSet
	approvers idSet

	base   context.Context // the lifetime of background work; ends at Close
	cancel context.CancelFunc
	seen   *dedupe
	known  *threads
	names  *names
	work   sync.WaitGroup
	link   *render.Link // for Health

	mu     sync.Mutex
	engine Engine
	self   *identity
	closed bool
}

// identity is the bot as auth.test describes it.
type identity struct {
	userID, botID, teamID, url string
}

var (
	_ chats.Chat     = (*Adapter)(nil)
	_ chats.Healther = (*Adapter)(nil)
	_ chats.Notifier = (*Adapter)(nil)
	_ chats.Threader = (*Adapter)(nil)
	_ chats.Router   = (*Adapter)(nil)
)

// New checks cfg and returns an adapter; it does no I/O. The engine comes
// with Run (Socket Mode) or Handler (HTTP mode).
func New(cfg Config, logger *slog.Logger) (*Adapter, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	log := logger.With("adapter", "slack")
	opts := []slack.Option{slack.OptionAPIURL(cfg.APIURL), slack.OptionHTTPClient(cfg.HTTPClient)}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	api := slack.New(cfg.BotToken, opts...)
	a := &Adapter{
		cfg: cfg, log: log, api: api, hc: cfg.HTTPClient, lim: cfg.Limiter,
		sender:   newSender(api, cfg, log),
		channels: newIDSet(cfg.Channels), users: newIDSet(cfg.AllowedUsers), approvers: newIDSet(cfg.Approvers),
		seen: newDedupe(time.Hour), known: newThreads(), names: newNames(),
	}
	a.link = render.NewLink("auth.test")
	if a.SocketMode() {
		a.link = render.NewLink("socket mode")
	}
	a.base, a.cancel = context.WithCancel(context.Background())
	return a, nil
}

// bind sets the engine that receives what people say and click.
func (a *Adapter) bind(e Engine) {
	a.mu.Lock()
	a.engine = e
	a.mu.Unlock()
}

// Sender returns the adapter's renderer.
func (a *Adapter) Sender() *Sender { return a.sender }

// Send renders an event of a Slack conversation (core.EventSender).
func (a *Adapter) Send(ctx context.Context, ev core.Event) error { return a.sender.Send(ctx, ev) }

// Platform is "slack".
func (a *Adapter) Platform() string { return "slack" }

// Routes serves HTTP mode on "/slack/" (Handler); Socket Mode needs none.
func (a *Adapter) Routes(e Engine) map[string]http.Handler {
	if a.SocketMode() {
		return nil
	}
	return map[string]http.Handler{"/slack/": a.Handler(e)}
}

// SocketMode reports whether the adapter receives over Socket Mode (an
// app token is set) rather than through Handler.
func (a *Adapter) SocketMode() bool { return a.cfg.AppToken != "" }

// Run identifies the bot (auth.test, retried while Slack is unreachable)
// and, in Socket Mode, receives events until ctx ends and hands them to e;
// in HTTP mode it only waits for ctx (Handler receives). It returns an
// error when Slack refuses the tokens or the API URL.
func (a *Adapter) Run(ctx context.Context, e Engine) error {
	a.bind(e)
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		_, err := a.identify(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if definitive(err) {
			return err
		}
		a.link.Down(err)
		a.log.Warn("slack unreachable; retrying", "err", err, "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	if !a.SocketMode() {
		a.link.Up()
		<-ctx.Done()
		return nil
	}
	return a.runSocketMode(ctx)
}

// Owns reports whether a conversation key is a Slack conversation; a
// router of events uses it.
func (a *Adapter) Owns(convKey string) bool { return strings.HasPrefix(convKey, "slack:") }

// closeTimeout bounds Close.
const closeTimeout = 10 * time.Second

// Close waits for the work already acknowledged, then delivers what the
// Sender has pending and stops it, within 10 seconds. Call it after Run
// returned and the engine shut down, so that the last events reach the
// Sender.
func (a *Adapter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	done := make(chan struct{})
	go func() { a.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	a.cancel()
	if err := a.sender.Close(ctx); err != nil {
		return fmt.Errorf("slack: close: %w", err)
	}
	return nil
}

func (a *Adapter) getEngine() Engine {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.engine
}

// identify returns the bot's identity, asking auth.test the first time.
func (a *Adapter) identify(ctx context.Context) (identity, error) {
	a.mu.Lock()
	if a.self != nil {
		defer a.mu.Unlock()
		return *a.self, nil
	}
	a.mu.Unlock()
	var res *slack.AuthTestResponse
	err := a.call(ctx, "auth.test", func(ctx context.Context) error {
		var err error
		res, err = a.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		return identity{}, fmt.Errorf("slack: auth.test (check bot_token and api_url): %w", err)
	}
	id := identity{userID: res.UserID, botID: res.BotID, teamID: res.TeamID, url: res.URL}
	a.mu.Lock()
	a.self = &id
	a.mu.Unlock()
	a.log.Info("slack bot identified", "user", id.userID, "team", id.teamID, "socket_mode", a.SocketMode())
	return id, nil
}

// definitive reports whether Slack refused a call for good (a bad token,
// a wrong API URL), as opposed to being unreachable.
func definitive(err error) bool {
	var se slack.SlackErrorResponse
	var sc slack.StatusCodeError
	return errors.As(err, &se) || errors.As(err, &sc) && sc.Code < 500 && sc.Code != http.StatusTooManyRequests
}

// spawn runs acknowledged work in the background, with a bounded context
// that does not end with the request that brought it.
func (a *Adapter) spawn(what string, f func(ctx context.Context)) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.log.Warn("shutting down: dropped", "what", what)
		return
	}
	a.work.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.work.Done()
		defer func() {
			if r := recover(); r != nil {
				a.log.Error("panic handling slack input", "what", what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
		}()
		ctx, cancel := context.WithTimeout(a.base, handlerTimeout)
		defer cancel()
		f(ctx)
	}()
}

// call makes a Web API call outside rendering under the shared limiter,
// retrying only when Slack said it did nothing (rate limited).
func (a *Adapter) call(ctx context.Context, key string, f func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		if err := a.lim.Wait(ctx, key, render.Urgent); err != nil {
			return err
		}
		err := f(ctx)
		var rl *slack.RateLimitedError
		if errors.As(err, &rl) && attempt < 4 {
			a.lim.Backoff(key, rl.RetryAfter, false)
			continue
		}
		return err
	}
}

// ephemeral shows text (mrkdwn) to one user only.
func (a *Adapter) ephemeral(ctx context.Context, channel, user, thread, text string) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	err := a.call(ctx, channel, func(ctx context.Context) error {
		_, err := a.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		a.log.Warn("ephemeral message not delivered", "channel", channel, "user", user, "err", err)
	}
}

// Notify shows approval ap's card at the top level of the channel a
// policy's notify target names (slack:<channel>): its buttons decide the
// request like the original card's, and it shows the outcome.
func (a *Adapter) Notify(ctx context.Context, channel string, ap core.Approval) error {
	me, err := a.identify(ctx)
	if err != nil {
		return fmt.Errorf("slack: notify %s: %w", channel, err)
	}
	a.sender.Card(ConvKey(me.teamID, channel, ""), ap)
	return nil
}

// StartThread posts text as a new message in channel and returns the
// conversation of its thread: a schedule's fire runs there (docs/design.md
// §13). Slack threads have no title.
func (a *Adapter) StartThread(ctx context.Context, channel, text, _ string) (string, error) {
	me, err := a.identify(ctx)
	if err != nil {
		return "", fmt.Errorf("slack: start a thread in %s: %w", channel, err)
	}
	var ts string
	err = a.call(ctx, channel, func(ctx context.Context) error {
		var err error
		_, ts, err = a.api.PostMessageContext(ctx, channel, slack.MsgOptionText(text, false),
			slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack: start a thread in %s (is opsgate a member of the channel?): %w", channel, err)
	}
	a.known.set(channel, ts, true)
	return ConvKey(me.teamID, channel, ts), nil
}
