package discordtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Routes of the calls that write messages, as Call.Route names them.
const (
	RouteCreateMessage = "POST /channels/{ch}/messages"
	RouteEditMessage   = "PATCH /channels/{ch}/messages/{mid}"
	RouteStartThread   = "POST /channels/{ch}/messages/{mid}/threads"
	RouteCallback      = "POST /interactions/{id}/{token}/callback"
	RouteFollowup      = "POST /webhooks/{app}/{token}"
	RouteEditOriginal  = "PATCH /webhooks/{app}/{token}/messages/{mid}"
	RouteGlobalCmds    = "PUT /applications/{app}/commands"
	RouteGuildCmds     = "PUT /applications/{app}/guilds/{guild}/commands"
)

// Per-channel message write limit, as Discord applies it to bots.
const (
	channelWrites = 5
	channelWindow = 5 * time.Second
)

// Call is one recorded REST call.
type Call struct {
	Time   time.Time
	Method string
	// Route is the method and the path pattern without /api/v9, e.g.
	// "PATCH /channels/{ch}/messages/{mid}".
	Route string
	Path  string
	Query string
	// Channel is the {ch} of the path, if any.
	Channel string
	Body    []byte
	Status  int
	// RetryAfter is what a 429 answer asked for.
	RetryAfter time.Duration
}

// Decode decodes the call's JSON body into v.
func (c Call) Decode(v any) error { return json.Unmarshal(c.Body, v) }

// Calls returns every REST call so far, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo returns the calls of one route, oldest first.
func (s *Server) CallsTo(route string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Route == route {
			out = append(out, c)
		}
	}
	return out
}

type rateRule struct {
	route      string
	n          int
	retryAfter time.Duration
	global     bool
}

// RateLimit makes the next n calls of route (see Call.Route) fail with 429
// and a JSON retry_after, without effect.
func (s *Server) RateLimit(route string, n int, retryAfter time.Duration, global bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, &rateRule{route: route, n: n, retryAfter: retryAfter, global: global})
}

// handler is a route's handler; it returns the status it wrote.
type handler func(w http.ResponseWriter, r *http.Request) int

// record wraps a handler: it checks the bot token, applies programmed and
// per-channel rate limits, and records the call.
func (s *Server) record(route string, bot bool, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		call := Call{Time: time.Now(), Method: r.Method, Route: route, Path: r.URL.Path, Query: r.URL.RawQuery,
			Channel: r.PathValue("ch"), Body: body}
		switch auth := r.Header.Get("Authorization"); {
		case bot && auth != "Bot "+s.Token:
			call.Status = writeJSON(w, http.StatusUnauthorized, apiError{Message: "401: Unauthorized", Code: 0})
		default:
			if d, global, limited := s.limit(route, call.Channel, call.Time); limited {
				call.RetryAfter = d
				call.Status = writeRateLimited(w, d, global)
				break
			}
			call.Status = h(w, r)
		}
		s.mu.Lock()
		s.calls = append(s.calls, call)
		s.changedLocked()
		s.mu.Unlock()
	}
}

// limit reports whether a call must be answered 429, and for how long.
func (s *Server) limit(route, channel string, now time.Time) (time.Duration, bool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, rule := range s.rules {
		if rule.route == route {
			rule.n--
			if rule.n <= 0 {
				s.rules = append(s.rules[:i], s.rules[i+1:]...)
			}
			return rule.retryAfter, rule.global, true
		}
	}
	if route != RouteCreateMessage && route != RouteEditMessage {
		return 0, false, false
	}
	var recent []time.Time
	for _, t := range s.writes[channel] {
		if now.Sub(t) < channelWindow {
			recent = append(recent, t)
		}
	}
	if len(recent) >= channelWrites {
		s.writes[channel] = recent
		return recent[0].Add(channelWindow).Sub(now), false, true
	}
	s.writes[channel] = append(recent, now)
	return 0, false, false
}

func writeRateLimited(w http.ResponseWriter, d time.Duration, global bool) int {
	secs := d.Seconds()
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(int(math.Ceil(secs))))
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset-After", fmt.Sprintf("%.3f", secs))
	h.Set("X-RateLimit-Bucket", "fake-bucket")
	scope := "user"
	if global {
		h.Set("X-RateLimit-Global", "true")
		scope = "global"
	}
	h.Set("X-RateLimit-Scope", scope)
	return writeJSON(w, http.StatusTooManyRequests, map[string]any{
		"message": "You are being rate limited.", "retry_after": secs, "global": global,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(mustJSON(v))
	return status
}

func noContent(w http.ResponseWriter) int {
	w.WriteHeader(http.StatusNoContent)
	return http.StatusNoContent
}
