// Package discordtest is an in-process fake of the Discord API for tests:
// the REST endpoints a bot uses (gateway discovery, messages, threads,
// renaming a channel or thread, interaction callbacks and webhooks,
// application commands) and the gateway websocket (Hello, Identify →
// READY, heartbeats and ACKs, Resume with replay of missed dispatches,
// dropped and zombie connections, op 7 Reconnect, op 9 Invalid Session,
// injected MESSAGE_CREATE and INTERACTION_CREATE, THREAD_CREATE and
// THREAD_UPDATE for what the bot does to threads).
//
// The fake keeps the state a user would see (channels, threads, messages
// after their edits, ephemeral replies) and records every call with its
// time, so tests can check what was shown and how fast. It behaves like
// Discord where a client can get it wrong: 2,000-character content limit,
// custom_id of at most 100 characters, at most 5 message writes per 5 s per
// channel (the 6th is answered 429), channel and thread names of 1 to 100
// characters, at most 2 renames per 10 minutes per channel, interactions
// that must be acknowledged within 3 s and only once, one thread per
// message, and 429 answers with a JSON retry_after that tests can program
// per route (and other failures, with Fail).
package discordtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the fake. It is safe for concurrent use.
type Server struct {
	// URL is the base URL to use as discord.api_url ("http://127.0.0.1:N/").
	URL string
	// Token is the bot token the fake accepts (without "Bot ").
	Token string
	// Bot is the bot user; AppID its application.
	Bot   User
	AppID string

	srv *httptest.Server
	gw  *gateway
	log func(format string, args ...any)

	mu           sync.Mutex
	changed      chan struct{} // closed and replaced on every change
	next         int64
	channels     map[string]*Channel
	messages     map[string][]*Message // by channel, oldest first
	interactions map[string]*interaction
	commands     map[string][]map[string]any // by guild ("" = global)
	calls        []Call
	rules        []*rateRule
	fails        []*failRule
	writes       map[string][]time.Time // message writes per channel, for the 5 / 5 s limit
	renames      map[string][]time.Time // channel renames, for the 2 / 10 min limit
	ackTimeout   time.Duration
}

// Option tunes a Server.
type Option func(*Server)

// WithHeartbeat sets the heartbeat interval announced in Hello (default 1 s).
func WithHeartbeat(d time.Duration) Option { return func(s *Server) { s.gw.interval = d } }

// WithAckTimeout sets how long an interaction may wait for its first
// response (Discord: 3 s).
func WithAckTimeout(d time.Duration) Option { return func(s *Server) { s.ackTimeout = d } }

// New starts a fake and stops it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := &Server{
		Token: "test-bot-token",
		Bot:   User{ID: "1100000000000000001", Name: "opsgate", Bot: true},
		AppID: "1100000000000000002",
		log:   t.Logf,

		changed:      make(chan struct{}),
		next:         1500000000000000000,
		channels:     map[string]*Channel{},
		messages:     map[string][]*Message{},
		interactions: map[string]*interaction{},
		commands:     map[string][]map[string]any{},
		writes:       map[string][]time.Time{},
		renames:      map[string][]time.Time{},
		ackTimeout:   3 * time.Second,
	}
	s.gw = newGateway(s)
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(s.routes())
	s.URL = s.srv.URL + "/"
	t.Cleanup(s.Close)
	return s
}

// Close drops every gateway connection and stops the server.
func (s *Server) Close() {
	s.gw.closeAll()
	s.srv.Close()
}

// nextID returns a new snowflake. s.mu must be held.
func (s *Server) nextIDLocked() string {
	s.next++
	return fmt.Sprint(s.next)
}

// changedLocked wakes everyone waiting for a change. s.mu must be held.
func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait polls cond after every change until it holds or timeout passes; it
// reports whether cond held.
func (s *Server) Wait(timeout time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return cond()
		}
	}
}

// AddChannel adds a text channel to a guild and returns it.
func (s *Server) AddChannel(guildID, channelID, name string) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Channel{ID: channelID, GuildID: guildID, Type: typeGuildText, Name: name}
	s.channels[channelID] = c
	return *c
}

// AddThread adds a thread (not created by the bot unless owner is the
// bot's id) under a text channel.
func (s *Server) AddThread(parentID, threadID, ownerID, name string) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.channels[parentID]
	c := &Channel{ID: threadID, GuildID: p.GuildID, Type: typePublicThread, ParentID: parentID, OwnerID: ownerID, Name: name}
	s.channels[threadID] = c
	return *c
}

// AddDM opens a DM channel between the bot and u.
func (s *Server) AddDM(channelID string, u User) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Channel{ID: channelID, Type: typeDM, Recipient: u}
	s.channels[channelID] = c
	return *c
}

// Channel returns a channel by id.
func (s *Server) Channel(id string) (Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return Channel{}, false
	}
	return *c, true
}

// Threads returns the threads under parent, in creation order.
func (s *Server) Threads(parentID string) []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Channel
	for _, m := range s.messages[parentID] {
		if c := s.channels[m.Thread]; m.Thread != "" && c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// Messages returns the messages of a channel as everyone sees them (no
// ephemeral ones), oldest first.
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages[channelID] {
		if !m.Ephemeral {
			out = append(out, copyMessage(m))
		}
	}
	return out
}

// Ephemerals returns the ephemeral messages shown to user, oldest first.
func (s *Server) Ephemerals(userID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, msgs := range s.messages {
		for _, m := range msgs {
			if it := s.interactions[m.Interaction]; m.Ephemeral && it != nil && it.user.ID == userID {
				out = append(out, copyMessage(m))
			}
		}
	}
	sortByID(out)
	return out
}

// Message returns a message by channel and id.
func (s *Server) Message(channelID, id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.findLocked(channelID, id); m != nil {
		return copyMessage(m), true
	}
	return Message{}, false
}

func (s *Server) findLocked(channelID, id string) *Message {
	for _, m := range s.messages[channelID] {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// Commands returns the application commands registered for guild ("" for
// global ones), as JSON objects.
func (s *Server) Commands(guildID string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.commands[guildID]...)
}

func copyMessage(m *Message) Message {
	c := *m
	c.Buttons = append([]Button(nil), m.Buttons...)
	c.Mentions = append([]User(nil), m.Mentions...)
	return c
}

func sortByID(ms []Message) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && less(ms[j].ID, ms[j-1].ID); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// less compares snowflakes, which are decimal numbers.
func less(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, bot bool, h func(w http.ResponseWriter, r *http.Request) int) {
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(method+" /api/v9"+path, s.record(method+" "+path, bot, h))
	}
	api("GET /gateway", true, s.getGateway)
	api("GET /gateway/bot", true, s.getGateway)
	api("GET /users/@me", true, s.getMe)
	api("GET /channels/{ch}", true, s.getChannel)
	api("PATCH /channels/{ch}", true, s.editChannel)
	api("POST /channels/{ch}/messages", true, s.createMessage)
	api("PATCH /channels/{ch}/messages/{mid}", true, s.editMessage)
	api("POST /channels/{ch}/messages/{mid}/threads", true, s.startThread)
	api("POST /channels/{ch}/typing", true, s.typing)
	api("POST /interactions/{id}/{token}/callback", false, s.callback)
	api("POST /webhooks/{app}/{token}", false, s.followup)
	api("GET /webhooks/{app}/{token}/messages/{mid}", false, s.getWebhookMessage)
	api("PATCH /webhooks/{app}/{token}/messages/{mid}", false, s.editWebhookMessage)
	api("PUT /applications/{app}/commands", true, s.putCommands)
	api("PUT /applications/{app}/guilds/{guild}/commands", true, s.putCommands)
	mux.HandleFunc("GET /gw/", s.gw.serve)
	mux.HandleFunc("GET /gw", s.gw.serve)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.log("discordtest: unhandled %s %s", r.Method, r.URL.Path)
		writeJSON(w, http.StatusNotFound, apiError{Message: "404: Not Found", Code: 0})
	})
	return mux
}
