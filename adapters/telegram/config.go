package telegram

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/render"
)

// Config configures the adapter (the telegram section of the config file).
type Config struct {
	// Token is the bot token from @BotFather ("<bot id>:<secret>").
	Token string
	// APIURL is the Bot API server (default https://api.telegram.org); set
	// it to use a self-hosted Bot API server.
	APIURL string
	// WebhookURL, when set, switches from long polling to a webhook: Run
	// registers it, and WebhookHandler must be served at its path.
	WebhookURL string
	// WebhookSecret is sent with setWebhook and checked on every webhook
	// request. Required with WebhookURL.
	WebhookSecret string
	// AllowedUsers are the Telegram user ids the bot talks to; everyone
	// else is refused. Empty means nobody.
	AllowedUsers []int64
	// Approvers may decide approval requests besides the requester, without
	// a policy file; the command line gives them to the policy. They may
	// also press Stop.
	Approvers []int64

	// PollTimeout is the long-polling timeout (default 30 s).
	PollTimeout time.Duration
	// HTTPClient is used for every Bot API call (default: a client with a
	// timeout a little longer than PollTimeout).
	HTTPClient *http.Client
	// Transport, when set, carries the default HTTPClient's requests (to
	// count them, for instance); it is ignored when HTTPClient is set.
	Transport http.RoundTripper
	// Limiter is the outbound budget of this bot token; share it with
	// anything else that posts with the same token (default: a new one).
	Limiter *render.Limiter
	// MinEditInterval and FirstSendDebounce override the rendering defaults
	// (1 s and 300 ms); tests shorten them.
	MinEditInterval   time.Duration
	FirstSendDebounce time.Duration
}

// Engine is what the adapter calls on the engine. When it is also a
// chats.Keeper (*core.Engine is), each chat's current conversation is
// durable: /new stores the new conversation at once, and after a restart
// (or on another replica) a chat continues the newest conversation /new
// started instead of the one before it.
type Engine = chats.Engine

// Defaults of Telegram rendering.
const (
	defaultMinEditInterval   = time.Second
	defaultFirstSendDebounce = 300 * time.Millisecond
	defaultPollTimeout       = 30 * time.Second
)

func (c Config) withDefaults() (Config, error) {
	if c.Token == "" {
		return c, errors.New("telegram: token is required")
	}
	if _, err := botIDOf(c.Token); err != nil {
		return c, err
	}
	if c.APIURL == "" {
		c.APIURL = "https://api.telegram.org"
	}
	u, err := url.Parse(c.APIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("telegram: api_url %q: want an http(s) URL", c.APIURL)
	}
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	if c.WebhookURL != "" {
		u, err := url.Parse(c.WebhookURL)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return c, fmt.Errorf("telegram: webhook_url %q: want an https URL", c.WebhookURL)
		}
		if len(c.WebhookSecret) < 16 || strings.Trim(c.WebhookSecret, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "" || len(c.WebhookSecret) > 256 {
			return c, errors.New("telegram: webhook_secret is required with webhook_url: 16-256 characters of A-Z, a-z, 0-9, _ and -")
		}
	}
	if c.PollTimeout <= 0 {
		c.PollTimeout = defaultPollTimeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.PollTimeout + 15*time.Second, Transport: c.Transport}
	}
	if c.Limiter == nil {
		// Telegram allows about 30 calls a second per bot. A bucket's worst
		// second is its burst plus its rate, so 27/s with a burst of 3 never
		// exceeds 30 in any second: a full bucket of 25 on top of 25/s did,
		// and drew global 429s right after a quiet period.
		c.Limiter = render.NewLimiter(render.LimiterConfig{Rate: 27, Burst: 3})
	}
	if c.MinEditInterval <= 0 {
		c.MinEditInterval = defaultMinEditInterval
	}
	if c.FirstSendDebounce <= 0 {
		c.FirstSendDebounce = defaultFirstSendDebounce
	}
	return c, nil
}

// botIDOf reads the bot's user id from its token, so conversation keys are
// known without a call to getMe.
func botIDOf(token string) (int64, error) {
	id, _, ok := strings.Cut(token, ":")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || n <= 0 {
		return 0, errors.New("telegram: token is malformed: want <bot id>:<secret> as @BotFather gives it")
	}
	return n, nil
}
