package discord

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// discordgo builds every REST URL from package-level variables computed
// once from "https://discord.com/". Reassigning them would change every
// session in the process (and race with requests in flight), so instead
// each adapter's HTTP client rewrites that base to discord.api_url. The
// gateway URL is discovered through the same client (GET api/v9/gateway),
// so a proxy or a fake at api_url also chooses the websocket to dial.

// defaultBase is the base discordgo's endpoint variables start with.
var defaultBase = discordgo.EndpointDiscord

// rebase is an http.RoundTripper that sends requests for defaultBase to
// base instead.
type rebase struct {
	base *url.URL // with a trailing "/" in Path
	next http.RoundTripper
}

func (t *rebase) RoundTrip(r *http.Request) (*http.Response, error) {
	u := r.URL.String()
	rest, ok := strings.CutPrefix(u, defaultBase)
	if !ok {
		return t.next.RoundTrip(r)
	}
	nu, err := url.Parse(t.base.String() + rest)
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.URL = nu
	r.Host = nu.Host
	return t.next.RoundTrip(r)
}

// newHTTPClient returns the REST client for apiURL (validated, ending in
// "/"), over transport (nil: http.DefaultTransport).
func newHTTPClient(apiURL string, transport http.RoundTripper) *http.Client {
	rt := transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if apiURL != defaultBase {
		base, _ := url.Parse(apiURL)
		rt = &rebase{base: base, next: rt}
	}
	// The timeout bounds a call whose context has no deadline (command
	// registration); render and the handlers pass their own contexts.
	return &http.Client{Transport: rt, Timeout: 20 * time.Second}
}
