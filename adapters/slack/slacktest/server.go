package slacktest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Identities of the fake workspace and app.
const (
	BotToken  = "xoxb-test-bot-token"
	AppToken  = "xapp-test-app-token"
	TeamID    = "T0TEST"
	TeamURL   = "https://opsgate-test.slack.com/"
	BotUserID = "U0BOT"
	BotID     = "B0BOT"
	AppID     = "A0APP"
)

// Server is the fake. It is safe for concurrent use.
type Server struct {
	srv *httptest.Server
	// PingInterval is how often connections get a PING frame (default
	// 200 ms). Set it before the client connects.
	PingInterval time.Duration

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every change
	base       int64
	tsN        int64 // the last ts given, in microseconds
	calls      []Call
	msgs       []*Message
	ephemerals []Ephemeral
	responses  []Response
	limits     map[string][]time.Duration // method -> scripted 429s
	holds      map[string]chan struct{}
	users      map[string]string
	echo       bool
	conns      []*wsConn
	opens      int
	accepted   int // websocket connections accepted, one per open
	acks       []Ack
	sent       map[string]time.Time // envelope id -> when it was sent
	pongs      int
	envN       int
	eventN     int
	respN      int
	closed     bool
}

// New starts a fake and closes it when the test ends.
func New(t testing.TB) *Server {
	s := &Server{
		PingInterval: 200 * time.Millisecond,
		changed:      make(chan struct{}),
		base:         time.Now().Unix(),
		limits:       map[string][]time.Duration{},
		holds:        map[string]chan struct{}{},
		users:        map[string]string{},
		sent:         map[string]time.Time{},
		echo:         true,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.api)
	mux.HandleFunc("/ws", s.socket)
	mux.HandleFunc("/response/", s.response)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// APIURL is the Web API base URL, ending with "/" as slack-go wants it.
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// Close ends every connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conns := s.conns
	for _, h := range s.holds {
		close(h)
	}
	s.holds = map[string]chan struct{}{}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetEcho turns echoing the bot's own posts as message events on or off.
func (s *Server) SetEcho(on bool) {
	s.mu.Lock()
	s.echo = on
	s.mu.Unlock()
}

// AddUser makes users.info know a user.
func (s *Server) AddUser(id, name string) {
	s.mu.Lock()
	s.users[id] = name
	s.mu.Unlock()
}

// RateLimit makes the next n calls of method answer HTTP 429 with
// Retry-After (whole seconds, at least 1), without effect.
func (s *Server) RateLimit(method string, n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.limits[method] = append(s.limits[method], retryAfter)
	}
}

// Hold makes calls of method wait until the returned release is called
// (or the server closes). A held call is recorded as method+":held" when
// it arrives, and as method when it is answered.
func (s *Server) Hold(method string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.holds[method] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.holds[method] == ch {
				delete(s.holds, method)
				close(ch)
			}
			s.mu.Unlock()
		})
	}
}

// NextTS returns a fresh message timestamp, as Slack assigns them.
func (s *Server) NextTS() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextTSLocked()
}

func (s *Server) nextTSLocked() string {
	// Slack's ts is the time the message was posted, to the microsecond,
	// and unique in a channel: opsgate reads a message's time from it (a
	// timeline orders messages by it).
	s.tsN = max(time.Now().UnixMicro(), s.tsN+1, s.base*1e6)
	return fmt.Sprintf("%d.%06d", s.tsN/1e6, s.tsN%1e6)
}

// changeLocked wakes everybody waiting in Eventually.
func (s *Server) changeLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Eventually waits until cond holds, re-checking whenever the fake's state
// changes; it fails the test after 20 seconds.
func (s *Server) Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-time.After(20 * time.Millisecond):
		case <-deadline.C:
			t.Fatalf("slacktest: timed out waiting for %s; calls:\n%s", what, s.dumpCalls())
		}
	}
}

func (s *Server) dumpCalls() string {
	var b strings.Builder
	for _, c := range s.Calls("") {
		fmt.Fprintf(&b, "  %s %s status=%d err=%q channel=%s ts=%s thread=%s\n",
			c.Time.Format("15:04:05.000"), c.Method, c.Status, c.Error, c.Channel, c.TS, c.ThreadTS)
	}
	return b.String()
}
