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

// Routes of the calls that write messages and channels, as Call.Route
// names them.
const (
	RouteCreateMessage = "POST /channels/{ch}/messages"
	RouteEditMessage   = "PATCH /channels/{ch}/messages/{mid}"
	RouteStartThread   = "POST /channels/{ch}/messages/{mid}/threads"
	RouteEditChannel   = "PATCH /channels/{ch}"
	RouteCallback      = "POST /interactions/{id}/{token}/callback"
	RouteFollowup      = "POST /webhooks/{app}/{token}"
	RouteEditOriginal  = "PATCH /webhooks/{app}/{token}/messages/{mid}"
	RouteGlobalCmds    = "PUT /applications/{app}/commands"
	RouteGuildCmds     = "PUT /applications/{app}/guilds/{guild}/commands"
)

// Per-channel limits, as Discord applies them to bots: 5 message writes
// per 5 s, and 2 renames per 10 minutes (undocumented, but enforced).
const (
	channelWrites  = 5
	channelWindow  = 5 * time.Second
	channelRenames = 2
	renameWindow   = 10 * time.Minute
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

type failRule struct {
	route  string
	n      int
	status int
}

// Fail makes the next n calls of route (see Call.Route) fail with status
// and a JSON error body, without effect: a 404 as if the channel had gone,
// a 500 as Discord has bad days.
func (s *Server) Fail(route string, n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = append(s.fails, &failRule{route: route, n: n, status: status})
}

// failure reports whether a call must fail, and with which status.
func (s *Server) failure(route string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, rule := range s.fails {
		if rule.route == route {
			rule.n--
			if rule.n <= 0 {
				s.fails = append(s.fails[:i], s.fails[i+1:]...)
			}
			return rule.status, true
		}
	}
	return 0, false
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
			if status, failed := s.failure(route); failed {
				msg := fmt.Sprintf("%d: %s", status, http.StatusText(status))
				call.Status = writeJSON(w, status, apiError{Message: msg, Code: 0})
				break
			}
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
	switch route {
	case RouteCreateMessage, RouteEditMessage:
		// Every write counts, refused or not.
		recent := since(s.writes[channel], now, channelWindow)
		if len(recent) >= channelWrites {
			s.writes[channel] = recent
			return recent[0].Add(channelWindow).Sub(now), false, true
		}
		s.writes[channel] = append(recent, now)
	case RouteEditChannel:
		// Only renames done count (editChannel records them).
		recent := since(s.renames[channel], now, renameWindow)
		s.renames[channel] = recent
		if len(recent) >= channelRenames {
			return recent[0].Add(renameWindow).Sub(now), false, true
		}
	}
	return 0, false, false
}

// since returns the times of ts within window before now.
func since(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	var recent []time.Time
	for _, t := range ts {
		if now.Sub(t) < window {
			recent = append(recent, t)
		}
	}
	return recent
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
