package metrics

import (
	"net/http"
	"strconv"
	"strings"
)

// Transport returns a RoundTripper that counts the calls next (nil:
// http.DefaultTransport) carries to platform's API, by endpoint(r) and
// status code, and the 429s apart. A nil *Metrics returns next unchanged.
func (m *Metrics) Transport(platform string, next http.RoundTripper, endpoint func(*http.Request) string) http.RoundTripper {
	if m == nil {
		return next
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return &counting{
		next: next, endpoint: endpoint,
		calls:   curried{m.apiCalls, platform},
		limited: curried{m.rateLimited, platform},
	}
}

type counting struct {
	next           http.RoundTripper
	endpoint       func(*http.Request) string
	calls, limited curried
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	ep := c.endpoint(r)
	resp, err := c.next.RoundTrip(r)
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			c.limited.WithLabelValues(ep).Inc()
		}
	}
	c.calls.WithLabelValues(ep, code).Inc()
	return resp, err
}

// other is the endpoint of a request whose path does not look like an API
// method, so that no id or token becomes a label value.
const other = "other"

// APIMethod is the endpoint of an RPC-style API: the last path segment,
// the method name of Telegram (/bot<token>/sendMessage) and Slack
// (/api/chat.postMessage).
func APIMethod(r *http.Request) string {
	path := strings.TrimSuffix(r.URL.Path, "/")
	name := path[strings.LastIndexByte(path, '/')+1:]
	if name == "" || len(name) > 64 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._") != "" {
		return other
	}
	return name
}

// RESTRoute is the endpoint of Discord's REST API: the HTTP method and the
// path after api/v<n>/, with every segment that is not a lower-case word
// (ids, interaction tokens, emoji) replaced by :id, e.g.
// "POST channels/:id/messages".
func RESTRoute(r *http.Request) string {
	path := r.URL.Path
	i := strings.Index(path, "/api/v")
	if i < 0 {
		return r.Method + " " + other
	}
	_, rest, _ := strings.Cut(path[i+len("/api/v"):], "/")
	segs := strings.Split(strings.Trim(rest, "/"), "/")
	if len(segs) > 8 {
		return r.Method + " " + other
	}
	for k, s := range segs {
		if s == "" || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz@_-") != "" {
			segs[k] = ":id"
		}
	}
	return r.Method + " " + strings.Join(segs, "/")
}
