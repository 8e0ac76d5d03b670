package telegramtest

import (
	"fmt"
	"time"
)

// Budget is Telegram's flood control as the fake enforces it once
// SetBudget turns it on: every call that names a chat (chat_id) counts
// against a global and a per-chat number of calls in any one-second
// window, and a call beyond either is answered 429 "Too Many Requests:
// retry after N" with parameters.retry_after, as Telegram does. Refused
// calls do not count. Calls without a chat (getUpdates, getMe,
// setMyCommands) are free, as Telegram's messaging limits do not cover
// them. A zero field means no limit of that kind.
type Budget struct {
	// Global is the calls per second the bot may make across all chats
	// (Telegram: about 30).
	Global int
	// PerChat is the calls per second the bot may make in one chat
	// (Telegram: about 1).
	PerChat int
}

// Which limit refused a call (Call.Limit).
const (
	LimitGlobal = "global"
	LimitChat   = "chat"
)

// budget is the state of an enforced Budget: the accepted calls of the
// last second, globally and per chat.
type budget struct {
	Budget
	global []time.Time
	chats  map[int64][]time.Time
}

// SetBudget turns flood control on with b (a zero Budget turns it off) and
// forgets the calls counted so far.
func (s *Server) SetBudget(b Budget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b == (Budget{}) {
		s.budget = nil
		return
	}
	s.budget = &budget{Budget: b, chats: map[int64][]time.Time{}}
}

// admitLocked takes the budget for a call to chat at now, or returns the
// 429 Telegram would answer and which limit refused it.
func (s *Server) admitLocked(chat int64, now time.Time) (*apiError, string) {
	b := s.budget
	if b == nil || chat == 0 {
		return nil, ""
	}
	b.global = inWindow(b.global, now)
	calls := inWindow(b.chats[chat], now)
	limit := ""
	switch {
	case b.PerChat > 0 && len(calls) >= b.PerChat:
		limit = LimitChat
	case b.Global > 0 && len(b.global) >= b.Global:
		limit = LimitGlobal
	}
	if limit != "" {
		b.chats[chat] = calls
		// Telegram counts in whole seconds, rounding up; the window is one
		// second, so after 1 s the call that filled it has left it.
		const ra = 1
		return &apiError{429, fmt.Sprintf("Too Many Requests: retry after %d", ra), ra}, limit
	}
	b.global = append(b.global, now)
	b.chats[chat] = append(calls, now)
	return nil, ""
}

// inWindow drops the times more than a second before now.
func inWindow(ts []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= time.Second {
		i++
	}
	return ts[i:]
}

// EarlyRetries returns the calls made to a chat before the retry_after of a
// 429 answered in that chat had passed, measured at the fake: a client that
// honours retry_after makes none. Telegram's 429 does not say whether the
// global or the chat's limit was hit, so a client can only honour it for
// the chat it called.
func (s *Server) EarlyRetries() []Call {
	until := map[int64]time.Time{}
	var out []Call
	for _, c := range s.Calls() {
		chat := c.Chat()
		if chat == 0 {
			continue
		}
		if c.Time.Before(until[chat]) {
			out = append(out, c)
		}
		if c.Code == 429 && c.RetryAfter > 0 {
			if u := c.Time.Add(time.Duration(c.RetryAfter) * time.Second); u.After(until[chat]) {
				until[chat] = u
			}
		}
	}
	return out
}
