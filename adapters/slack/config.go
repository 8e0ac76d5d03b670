package slack

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
)

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api/"

// Config configures the adapter (the slack section of opsgate.yaml).
type Config struct {
	// BotToken (xoxb-…) makes every Web API call. Required.
	BotToken string
	// AppToken (xapp-…, connections:write) selects Socket Mode.
	AppToken string
	// SigningSecret verifies HTTP mode requests; required without AppToken.
	SigningSecret string
	// APIURL overrides the Web API base URL (default DefaultAPIURL); a
	// missing trailing "/" is added.
	APIURL string
	// Channels are the channel ids where the bot answers; "*" means every
	// channel it is a member of. Empty: no channel (direct messages only).
	Channels []string
	// AllowedUsers are the user ids who may talk to the bot in direct
	// messages and, when set, the only ones who may use it at all; "*"
	// means everyone. Empty: anyone in an allowed channel, no DMs.
	AllowedUsers []string
	// Approvers may decide approval requests of Slack conversations
	// besides the requester, without a policy file; the command line gives
	// them to the policy.
	Approvers []string

	// HTTPClient makes the Web API calls (default: 30 s timeout).
	HTTPClient *http.Client
	// Transport, when set, carries the default HTTPClient's requests (to
	// count them, for instance); it is ignored when HTTPClient is set.
	Transport http.RoundTripper
	// Limiter is the outbound budget of the bot token; share it with
	// anything else that posts with the same token (default: a new one).
	Limiter *render.Limiter
	// MinEditInterval and FirstSendDebounce override the rendering
	// defaults (1 s: chat.update is rate-limited per workspace; 400 ms).
	MinEditInterval   time.Duration
	FirstSendDebounce time.Duration
}

// normalize checks the configuration and fills in defaults.
func (c Config) normalize() (Config, error) {
	c.BotToken = strings.TrimSpace(c.BotToken)
	c.AppToken = strings.TrimSpace(c.AppToken)
	switch {
	case c.BotToken == "":
		return c, errors.New("slack: bot_token is required")
	case strings.HasPrefix(c.BotToken, "xapp-"):
		return c, errors.New("slack: bot_token is an app-level token (xapp-…); use the bot token (xoxb-…) and put the xapp- token in app_token")
	case c.AppToken != "" && !strings.HasPrefix(c.AppToken, "xapp-"):
		return c, errors.New("slack: app_token must be an app-level token (xapp-…) with the connections:write scope")
	case c.AppToken == "" && c.SigningSecret == "":
		return c, errors.New("slack: set app_token (Socket Mode) or signing_secret (HTTP mode)")
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: c.Transport}
	}
	if c.Limiter == nil {
		// Slack's limits are per method and workspace (chat.update: Tier
		// 3, about 50 a minute, with bursts); streaming edits use the low
		// priority and stretch under pressure.
		c.Limiter = render.NewLimiter(render.LimiterConfig{Rate: 2, Burst: 20})
	}
	if c.MinEditInterval <= 0 {
		c.MinEditInterval = time.Second
	}
	if c.FirstSendDebounce <= 0 {
		c.FirstSendDebounce = 400 * time.Millisecond
	}
	u, err := url.Parse(c.APIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("slack: api_url %q: want an http(s) URL such as %s", c.APIURL, DefaultAPIURL)
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	for _, list := range []struct {
		name string
		ids  *[]string
	}{{"channels", &c.Channels}, {"allowed_users", &c.AllowedUsers}, {"approvers", &c.Approvers}} {
		var ids []string
		for _, id := range *list.ids {
			id = strings.TrimSpace(id)
			if id == "" {
				return c, fmt.Errorf("slack: %s: empty id", list.name)
			}
			if id == "*" && list.name == "approvers" {
				return c, errors.New(`slack: approvers: "*" would let anyone approve; list user ids`)
			}
			ids = append(ids, id)
		}
		*list.ids = ids
	}
	return c, nil
}

// idSet is an allowlist; "*" admits everyone.
type idSet struct {
	all bool
	ids map[string]bool
}

func newIDSet(ids []string) idSet {
	s := idSet{ids: map[string]bool{}}
	for _, id := range ids {
		if id == "*" {
			s.all = true
		}
		s.ids[id] = true
	}
	return s
}

func (s idSet) has(id string) bool { return s.all || s.ids[id] }
func (s idSet) empty() bool        { return len(s.ids) == 0 }

// isDM reports whether a channel id is a direct message with the bot.
func isDM(channel string) bool { return strings.HasPrefix(channel, "D") }

// ConvKey returns the conversation key of a Slack thread. An empty
// threadTS means the channel itself (top-level messages), as schedules use.
func ConvKey(team, channel, threadTS string) string {
	return "slack:" + team + ":" + channel + ":" + threadTS
}

// parseKey splits a conversation key made by ConvKey.
func parseKey(key string) (team, channel, thread string, ok bool) {
	parts := strings.SplitN(key, ":", 4)
	if len(parts) != 4 || parts[0] != "slack" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[1], parts[2], parts[3], true
}
