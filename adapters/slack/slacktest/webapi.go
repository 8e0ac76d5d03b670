package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Call is one recorded Web API call.
type Call struct {
	Method string
	Form   url.Values
	Time   time.Time // arrival
	Status int       // the HTTP status answered
	Error  string    // Slack's error code when it answered ok=false
	// The message the call created or changed, when there is one.
	Channel, TS, ThreadTS string
}

// OK reports whether the call succeeded.
func (c Call) OK() bool { return c.Status == http.StatusOK && c.Error == "" }

// Calls returns the recorded calls of method ("" for all), oldest first.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

type apiResult struct {
	status int
	body   map[string]any
	call   Call
}

func ok(body map[string]any) apiResult {
	if body == nil {
		body = map[string]any{}
	}
	body["ok"] = true
	return apiResult{status: http.StatusOK, body: body}
}

func fail(code string) apiResult {
	return apiResult{status: http.StatusOK, body: map[string]any{"ok": false, "error": code}, call: Call{Error: code}}
}

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	_ = r.ParseForm()
	call := Call{Method: method, Form: r.PostForm, Time: time.Now()}
	token := r.PostForm.Get("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	}

	s.mu.Lock()
	hold := s.holds[method]
	var limited *time.Duration
	if q := s.limits[method]; len(q) > 0 {
		d := q[0]
		s.limits[method] = q[1:]
		limited = &d
	}
	s.mu.Unlock()

	if limited != nil {
		secs := max(1, int((*limited+time.Second-1)/time.Second))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"ok":false,"error":"ratelimited"}`))
		call.Status, call.Error = http.StatusTooManyRequests, "ratelimited"
		s.record(call)
		return
	}
	if hold != nil {
		s.record(Call{Method: method + ":held", Form: r.PostForm, Time: call.Time, Status: http.StatusOK})
		<-hold
	}

	var res apiResult
	want := BotToken
	if method == "apps.connections.open" {
		want = AppToken
	}
	if token != want {
		res = fail("invalid_auth")
	} else {
		res = s.dispatch(method, r.PostForm)
	}
	res.call.Method, res.call.Form, res.call.Time, res.call.Status = method, r.PostForm, call.Time, res.status
	if e, _ := res.body["error"].(string); e != "" {
		res.call.Error = e
	}
	s.record(res.call)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(res.status)
	_ = json.NewEncoder(w).Encode(res.body)
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.changeLocked()
	s.mu.Unlock()
}

func (s *Server) dispatch(method string, f url.Values) apiResult {
	switch method {
	case "auth.test":
		return ok(map[string]any{"url": TeamURL, "team": "opsgate test", "user": "opsgate",
			"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID})
	case "apps.connections.open":
		s.mu.Lock()
		s.opens++
		s.mu.Unlock()
		return ok(map[string]any{"url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws"})
	case "chat.postMessage":
		return s.postMessage(f)
	case "chat.update":
		return s.update(f)
	case "chat.postEphemeral":
		return s.postEphemeral(f)
	case "conversations.replies":
		return s.replies(f)
	case "users.info":
		s.mu.Lock()
		name, found := s.users[f.Get("user")]
		s.mu.Unlock()
		if !found {
			return fail("user_not_found")
		}
		return ok(map[string]any{"user": map[string]any{"id": f.Get("user"), "name": name, "real_name": name,
			"profile": map[string]any{"display_name": name, "real_name": name}}})
	}
	return fail("unknown_method")
}

func (s *Server) postMessage(f url.Values) apiResult {
	ch := f.Get("channel")
	if ch == "" {
		return fail("channel_not_found")
	}
	blocks, code := parseBlocks(f.Get("blocks"))
	if code != "" {
		return fail(code)
	}
	if f.Get("text") == "" && len(blocks) == 0 {
		return fail("no_text")
	}
	s.mu.Lock()
	m := &Message{Channel: ch, TS: s.nextTSLocked(), ThreadTS: f.Get("thread_ts"), User: BotUserID, BotID: BotID,
		Text: f.Get("text"), Blocks: blocks}
	s.msgs = append(s.msgs, m)
	echo := s.echo && len(s.conns) > 0
	cp := *m
	s.mu.Unlock()
	if echo {
		go s.echoMessage(cp)
	}
	res := ok(map[string]any{"channel": ch, "ts": m.TS, "message": m.wire()})
	res.call = Call{Channel: ch, TS: m.TS, ThreadTS: m.ThreadTS}
	return res
}

func (s *Server) update(f url.Values) apiResult {
	ch, ts := f.Get("channel"), f.Get("ts")
	blocks, code := parseBlocks(f.Get("blocks"))
	if code != "" {
		return fail(code)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.msgs {
		if m.Channel != ch || m.TS != ts {
			continue
		}
		if m.BotID != BotID {
			return fail("cant_update_message")
		}
		if f.Has("text") {
			m.Text = f.Get("text")
		}
		if f.Has("blocks") {
			m.Blocks = blocks
		}
		m.Edits++
		res := ok(map[string]any{"channel": ch, "ts": ts, "text": m.Text})
		res.call = Call{Channel: ch, TS: ts, ThreadTS: m.ThreadTS}
		return res
	}
	return fail("message_not_found")
}

// Ephemeral is a message only one user saw.
type Ephemeral struct {
	Channel, User, ThreadTS, Text string
	Blocks                        []Block
	Time                          time.Time
}

func (s *Server) postEphemeral(f url.Values) apiResult {
	blocks, code := parseBlocks(f.Get("blocks"))
	if code != "" {
		return fail(code)
	}
	if f.Get("user") == "" {
		return fail("user_not_found")
	}
	s.mu.Lock()
	e := Ephemeral{Channel: f.Get("channel"), User: f.Get("user"), ThreadTS: f.Get("thread_ts"), Text: f.Get("text"),
		Blocks: blocks, Time: time.Now()}
	s.ephemerals = append(s.ephemerals, e)
	ts := s.nextTSLocked()
	s.mu.Unlock()
	res := ok(map[string]any{"message_ts": ts})
	res.call = Call{Channel: e.Channel, ThreadTS: e.ThreadTS}
	return res
}

// Ephemerals returns the ephemeral messages shown to user ("" for all).
func (s *Server) Ephemerals(user string) []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Ephemeral
	for _, e := range s.ephemerals {
		if user == "" || e.User == user {
			out = append(out, e)
		}
	}
	return out
}

func (s *Server) replies(f url.Values) apiResult {
	ch, ts := f.Get("channel"), f.Get("ts")
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, m := range s.msgs {
		if m.Channel == ch && (m.TS == ts || m.ThreadTS == ts) {
			out = append(out, m.wire())
		}
	}
	if len(out) == 0 {
		return fail("thread_not_found")
	}
	return ok(map[string]any{"messages": out, "has_more": false})
}

// Response is a message posted to a slash command's response_url.
type Response struct {
	Path string
	Body map[string]any
	Time time.Time
}

// Text returns the response's text.
func (r Response) Text() string {
	s, _ := r.Body["text"].(string)
	return s
}

func (s *Server) response(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.responses = append(s.responses, Response{Path: r.URL.Path, Body: body, Time: time.Now()})
	s.changeLocked()
	s.mu.Unlock()
	_, _ = w.Write([]byte("ok"))
}

// Responses returns what was posted to response URLs, oldest first.
func (s *Server) Responses() []Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Response(nil), s.responses...)
}

func (s *Server) newResponseURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respN++
	return fmt.Sprintf("%s/response/%d", s.srv.URL, s.respN)
}
