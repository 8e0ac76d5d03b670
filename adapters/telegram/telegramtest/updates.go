package telegramtest

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// User returns a Telegram user for tests.
func User(id int64, username string) *tgbotapi.User {
	return &tgbotapi.User{ID: id, FirstName: strings.ToUpper(username[:1]) + username[1:], UserName: username}
}

// PrivateChat and GroupChat return chats for tests.
func PrivateChat(id int64) *tgbotapi.Chat { return &tgbotapi.Chat{ID: id, Type: "private"} }

// GroupChat returns a group chat.
func GroupChat(id int64) *tgbotapi.Chat {
	return &tgbotapi.Chat{ID: id, Type: "supergroup", Title: "ops"}
}

// NewTextUpdate returns (without queueing it) an update carrying a text
// message; commands get their bot_command entity as Telegram sends them.
func (s *Server) NewTextUpdate(c *tgbotapi.Chat, from *tgbotapi.User, text string) tgbotapi.Update {
	s.mu.Lock()
	s.nextUpd++
	id := s.nextUpd
	s.mu.Unlock()
	m := &tgbotapi.Message{MessageID: id * 10, From: from, Chat: c, Date: int(time.Now().Unix()), Text: text}
	if strings.HasPrefix(text, "/") {
		n := strings.IndexByte(text, ' ')
		if n < 0 {
			n = len(text)
		}
		m.Entities = []tgbotapi.MessageEntity{{Type: "bot_command", Offset: 0, Length: n}}
	}
	return tgbotapi.Update{UpdateID: id, Message: m}
}

// NewClickUpdate returns (without queueing it) a callback query of from
// pressing a button with data under message msgID of chat.
func (s *Server) NewClickUpdate(chatID int64, msgID int, from *tgbotapi.User, data string) tgbotapi.Update {
	s.mu.Lock()
	s.nextUpd++
	id := s.nextUpd
	s.mu.Unlock()
	return tgbotapi.Update{UpdateID: id, CallbackQuery: &tgbotapi.CallbackQuery{
		ID: "cq" + strconv.Itoa(id), From: from, Data: data, ChatInstance: "ci",
		Message: &tgbotapi.Message{MessageID: msgID, Chat: &tgbotapi.Chat{ID: chatID, Type: "private"}},
	}}
}

// Push queues updates for getUpdates.
func (s *Server) Push(us ...tgbotapi.Update) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates = append(s.updates, us...)
	s.changedLocked()
}

// SendText queues a text message from a user and returns its update.
func (s *Server) SendText(c *tgbotapi.Chat, from *tgbotapi.User, text string) tgbotapi.Update {
	u := s.NewTextUpdate(c, from, text)
	s.Push(u)
	return u
}

// Click queues a button press and returns its update.
func (s *Server) Click(chatID int64, msgID int, from *tgbotapi.User, data string) tgbotapi.Update {
	u := s.NewClickUpdate(chatID, msgID, from, data)
	s.Push(u)
	return u
}

// getUpdates long-polls: it drops the updates below offset (Telegram's
// acknowledgement) and waits up to timeout seconds for newer ones.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request) {
	p := r.PostForm
	offset, _ := strconv.Atoi(p.Get("offset"))
	timeout, _ := strconv.Atoi(p.Get("timeout"))
	limit, _ := strconv.Atoi(p.Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	s.mu.Lock()
	s.polls = append(s.polls, time.Now())
	s.mu.Unlock()
	for {
		s.mu.Lock()
		if s.outageLocked(w, "getUpdates", p) {
			s.mu.Unlock()
			return
		}
		if s.webhook.URL != "" {
			s.calls = append(s.calls, Call{Method: "getUpdates", Params: p, Time: time.Now(), Code: 409})
			s.mu.Unlock()
			writeErr(w, apiError{409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", 0})
			return
		}
		if _, aerr := s.faultLocked("getUpdates", p); aerr != nil {
			s.calls = append(s.calls, Call{Method: "getUpdates", Params: p, Time: time.Now(), Code: aerr.code, Error: aerr.desc, RetryAfter: aerr.ra})
			s.mu.Unlock()
			writeErr(w, *aerr)
			return
		}
		if offset > s.confirmed {
			s.confirmed = offset
		}
		keep := s.updates[:0]
		for _, u := range s.updates {
			if u.UpdateID >= offset {
				keep = append(keep, u)
			}
		}
		s.updates = keep
		if len(keep) > 0 || !time.Now().Before(deadline) {
			out := append([]tgbotapi.Update(nil), keep[:min(limit, len(keep))]...)
			s.calls = append(s.calls, Call{Method: "getUpdates", Params: p, Time: time.Now(), Code: 200})
			s.changedLocked()
			s.mu.Unlock()
			writeJSON(w, 200, map[string]any{"ok": true, "result": out})
			return
		}
		ch := s.changed
		s.mu.Unlock()
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-ch:
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		t.Stop()
	}
}
