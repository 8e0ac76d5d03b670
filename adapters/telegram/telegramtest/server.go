// Package telegramtest is an in-process fake of the Telegram Bot API for
// tests: an httptest server that records every call, keeps the messages of
// every chat as a user would see them (HTML parsed like Telegram does),
// serves updates by long polling with offsets, and can be told to answer
// 429 with retry_after or 400 "can't parse entities", or to be down
// altogether (Outage). With SetBudget it enforces Telegram's flood limits
// (global and per chat), answering 429 beyond them.
package telegramtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Token is a well-formed bot token the fake accepts; the bot's id is 123456.
const Token = "123456:TEST-token_abcdefghijklmnopqrstuvwxyz"

// BotID and BotUsername describe the fake bot (getMe).
const (
	BotID       = 123456
	BotUsername = "opsgate_bot"
)

// MaxText is Telegram's message limit, in UTF-16 code units after entity
// parsing.
const MaxText = 4096

// Server is the fake Bot API. Use URL as telegram.api_url.
type Server struct {
	URL string
	srv *httptest.Server

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	calls     []Call
	faults    []Fault
	updates   []tgbotapi.Update
	nextUpd   int
	confirmed int // the highest offset a getUpdates asked for
	chats     map[int64]*chat
	answers   []Answer
	webhook   Webhook
	commands  string
	budget    *budget     // flood control, nil unless SetBudget turned it on
	polls     []time.Time // when each getUpdates request arrived
	down      bool        // Outage: every call is answered 502
}

type chat struct {
	next int
	msgs []*Message
}

// Call is one recorded request.
type Call struct {
	Method string
	Params url.Values
	Time   time.Time
	// Code is the HTTP status the fake answered (200, 400, 429 …).
	Code int
	// Error is the description of a failed call.
	Error string
	// RetryAfter is the retry_after of a 429, in seconds.
	RetryAfter int
	// Limit says which limit of the Budget refused the call (LimitGlobal,
	// LimitChat), empty for calls the budget did not refuse.
	Limit string
}

// Chat returns the chat_id of the call, or 0.
func (c Call) Chat() int64 {
	n, _ := strconv.ParseInt(c.Params.Get("chat_id"), 10, 64)
	return n
}

// Message is a message the bot sent, as the chat shows it now.
type Message struct {
	ID        int
	ChatID    int64
	Raw       string // the text as sent
	ParseMode string
	Visible   string // what a reader sees
	Buttons   []Button
	Edits     int
}

// Button is an inline keyboard button.
type Button struct {
	Text string
	Data string
}

// Answer is an answerCallbackQuery call.
type Answer struct {
	QueryID   string
	Text      string
	ShowAlert bool
}

// Webhook is the webhook the bot set.
type Webhook struct {
	URL    string
	Secret string
}

// Fault makes matching calls fail. Chat 0 matches every chat; Times is how
// many calls fail (default 1).
type Fault struct {
	Method      string
	Chat        int64
	Code        int
	Description string
	RetryAfter  int // seconds, for 429
	Times       int
}

// New starts a fake and closes it when the test ends.
func New(t testing.TB) *Server {
	s := NewServer()
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a fake; Close stops it.
func NewServer() *Server {
	s := &Server{changed: make(chan struct{}), chats: map[int64]*chat{}, nextUpd: 1000}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Inject adds a fault.
func (s *Server) Inject(f Fault) {
	if f.Times == 0 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// RateLimit makes the next call of method for chat answer 429 with
// retry_after seconds.
func (s *Server) RateLimit(method string, chatID int64, retryAfter int) {
	s.Inject(Fault{Method: method, Chat: chatID, Code: 429, RetryAfter: retryAfter,
		Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter)})
}

// RejectEntities makes the next n calls of method that use a parse mode
// answer 400 "can't parse entities", as Telegram does for bad markup.
func (s *Server) RejectEntities(method string, n int) {
	s.Inject(Fault{Method: method, Code: 400, Times: n,
		Description: "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 7"})
}

// Outage makes the Bot API unavailable until Restore: every call, a long
// poll already waiting included, is answered 502 Bad Gateway, as
// Telegram's front end answers while the Bot API behind it is down.
func (s *Server) Outage() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = true
	s.changedLocked() // wakes the long polls
}

// Restore ends an Outage.
func (s *Server) Restore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = false
	s.changedLocked()
}

// badGateway is Telegram's answer while the Bot API is down.
var badGateway = apiError{502, "Bad Gateway", 0}

// outageLocked answers and records a call made during an Outage.
func (s *Server) outageLocked(w http.ResponseWriter, method string, p url.Values) bool {
	if !s.down {
		return false
	}
	s.calls = append(s.calls, Call{Method: method, Params: p, Time: time.Now(), Code: badGateway.code, Error: badGateway.desc})
	s.changedLocked()
	writeErr(w, badGateway)
	return true
}

func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change (a call, an update).
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Calls returns every call so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo returns the calls of method, for chat unless chat is 0.
func (s *Server) CallsTo(method string, chatID int64) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Method == method && (chatID == 0 || c.Chat() == chatID) {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns the messages the bot sent to chat, oldest first.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	if c := s.chats[chatID]; c != nil {
		for _, m := range c.msgs {
			cp := *m
			cp.Buttons = append([]Button(nil), m.Buttons...)
			out = append(out, cp)
		}
	}
	return out
}

// Answers returns the callback answers so far.
func (s *Server) Answers() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Answer(nil), s.answers...)
}

// Webhook returns the webhook the bot set, if any.
func (s *Server) Webhook() Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook
}

// Confirmed returns the highest offset the bot passed to getUpdates: every
// update below it is acknowledged and will not be delivered again.
func (s *Server) Confirmed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// PollStarts returns when each getUpdates request arrived, oldest first.
// Calls records a long poll only when it returns; this tells when a client
// started polling (for instance, when an adapter became ready).
func (s *Server) PollStarts() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.polls...)
}

// MessageVisible returns the visible length of text in UTF-16 code units.
func MessageVisible(text string) int { return len(utf16.Encode([]rune(text))) }
