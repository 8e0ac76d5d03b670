package telegramtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

type apiError struct {
	code int
	desc string
	ra   int
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// Paths are /bot<token>/<method>.
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "bot") {
		writeErr(w, apiError{404, "Not Found", 0})
		return
	}
	if parts[0] != "bot"+Token {
		writeErr(w, apiError{401, "Unauthorized", 0})
		return
	}
	if err := r.ParseForm(); err != nil {
		writeErr(w, apiError{400, "Bad Request: " + err.Error(), 0})
		return
	}
	method := parts[1]
	if method == "getUpdates" {
		s.getUpdates(w, r)
		return
	}
	s.mu.Lock()
	if s.outageLocked(w, method, r.PostForm) {
		s.mu.Unlock()
		return
	}
	call := Call{Method: method, Params: r.PostForm, Time: time.Now(), Code: 200}
	result, aerr := s.faultLocked(method, r.PostForm)
	if aerr == nil {
		aerr, call.Limit = s.admitLocked(call.Chat(), call.Time)
	}
	if aerr == nil {
		result, aerr = s.dispatchLocked(method, r.PostForm)
	}
	if aerr != nil {
		call.Code, call.Error, call.RetryAfter = aerr.code, aerr.desc, aerr.ra
	}
	s.calls = append(s.calls, call)
	s.changedLocked()
	s.mu.Unlock()
	if aerr != nil {
		writeErr(w, *aerr)
		return
	}
	writeJSON(w, 200, map[string]any{"ok": true, "result": result})
}

func (s *Server) faultLocked(method string, p map[string][]string) (any, *apiError) {
	chatID, _ := strconv.ParseInt(first(p, "chat_id"), 10, 64)
	for i := range s.faults {
		f := &s.faults[i]
		if f.Method != method || (f.Chat != 0 && f.Chat != chatID) || f.Times == 0 {
			continue
		}
		if f.Code == 400 && strings.Contains(f.Description, "parse entities") && first(p, "parse_mode") == "" {
			continue // plain text has no entities to reject
		}
		f.Times--
		return nil, &apiError{f.Code, f.Description, f.RetryAfter}
	}
	return nil, nil
}

func first(p map[string][]string, k string) string {
	if v := p[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (s *Server) dispatchLocked(method string, p map[string][]string) (any, *apiError) {
	switch method {
	case "getMe":
		return map[string]any{"id": BotID, "is_bot": true, "first_name": "opsgate", "username": BotUsername}, nil
	case "sendMessage":
		return s.sendLocked(p)
	case "editMessageText":
		return s.editLocked(p, true)
	case "editMessageReplyMarkup":
		return s.editLocked(p, false)
	case "answerCallbackQuery":
		s.answers = append(s.answers, Answer{QueryID: first(p, "callback_query_id"), Text: first(p, "text"), ShowAlert: first(p, "show_alert") == "true"})
		return true, nil
	case "sendChatAction", "setMyCommands", "deleteMyCommands":
		if method == "setMyCommands" {
			s.commands = first(p, "commands")
		}
		return true, nil
	case "setWebhook":
		s.webhook = Webhook{URL: first(p, "url"), Secret: first(p, "secret_token")}
		return true, nil
	case "deleteWebhook":
		s.webhook = Webhook{}
		return true, nil
	case "getWebhookInfo":
		return map[string]any{"url": s.webhook.URL, "pending_update_count": len(s.updates)}, nil
	}
	return nil, &apiError{404, "Not Found: method not found", 0}
}

// render parses text as Telegram would and checks its length.
func render(p map[string][]string) (visible string, aerr *apiError) {
	text := first(p, "text")
	visible = text
	switch mode := first(p, "parse_mode"); mode {
	case "":
	case tgbotapi.ModeHTML:
		v, err := ParseHTML(text)
		if err != nil {
			return "", &apiError{400, "Bad Request: " + err.Error(), 0}
		}
		visible = v
	default:
		return "", &apiError{400, "Bad Request: unsupported parse_mode " + mode + " in this fake", 0}
	}
	if strings.TrimSpace(visible) == "" {
		return "", &apiError{400, "Bad Request: message text is empty", 0}
	}
	if MessageVisible(visible) > MaxText {
		return "", &apiError{400, "Bad Request: message is too long", 0}
	}
	return visible, nil
}

func buttons(p map[string][]string) ([]Button, *apiError) {
	raw := first(p, "reply_markup")
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var kb tgbotapi.InlineKeyboardMarkup
	if err := json.Unmarshal([]byte(raw), &kb); err != nil {
		return nil, &apiError{400, "Bad Request: can't parse reply keyboard markup JSON object", 0}
	}
	var out []Button
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			data := ""
			if b.CallbackData != nil {
				data = *b.CallbackData
			}
			if len(data) == 0 || len(data) > 64 {
				return nil, &apiError{400, "Bad Request: BUTTON_DATA_INVALID", 0}
			}
			out = append(out, Button{Text: b.Text, Data: data})
		}
	}
	return out, nil
}

func (s *Server) sendLocked(p map[string][]string) (any, *apiError) {
	chatID, err := strconv.ParseInt(first(p, "chat_id"), 10, 64)
	if err != nil || chatID == 0 {
		return nil, &apiError{400, "Bad Request: chat not found", 0}
	}
	visible, aerr := render(p)
	if aerr != nil {
		return nil, aerr
	}
	bs, aerr := buttons(p)
	if aerr != nil {
		return nil, aerr
	}
	c := s.chats[chatID]
	if c == nil {
		c = &chat{}
		s.chats[chatID] = c
	}
	c.next++
	m := &Message{ID: c.next, ChatID: chatID, Raw: first(p, "text"), ParseMode: first(p, "parse_mode"), Visible: visible, Buttons: bs}
	c.msgs = append(c.msgs, m)
	return messageJSON(m), nil
}

func (s *Server) editLocked(p map[string][]string, text bool) (any, *apiError) {
	chatID, _ := strconv.ParseInt(first(p, "chat_id"), 10, 64)
	id, _ := strconv.Atoi(first(p, "message_id"))
	var m *Message
	if c := s.chats[chatID]; c != nil {
		for _, x := range c.msgs {
			if x.ID == id {
				m = x
			}
		}
	}
	if m == nil {
		return nil, &apiError{400, "Bad Request: message to edit not found", 0}
	}
	visible, raw, mode := m.Visible, m.Raw, m.ParseMode
	if text {
		var aerr *apiError
		if visible, aerr = render(p); aerr != nil {
			return nil, aerr
		}
		raw, mode = first(p, "text"), first(p, "parse_mode")
	}
	// Like Telegram, an edit without reply_markup removes the keyboard.
	bs, aerr := buttons(p)
	if aerr != nil {
		return nil, aerr
	}
	if visible == m.Visible && sameButtons(bs, m.Buttons) {
		return nil, &apiError{400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message", 0}
	}
	m.Visible, m.Raw, m.ParseMode, m.Buttons = visible, raw, mode, bs
	m.Edits++
	return messageJSON(m), nil
}

func sameButtons(a, b []Button) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func messageJSON(m *Message) map[string]any {
	return map[string]any{
		"message_id": m.ID, "date": time.Now().Unix(), "text": m.Visible,
		"chat": map[string]any{"id": m.ChatID, "type": "private"},
		"from": map[string]any{"id": BotID, "is_bot": true, "first_name": "opsgate", "username": BotUsername},
	}
}

func writeErr(w http.ResponseWriter, e apiError) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.desc}
	if e.ra > 0 {
		body["parameters"] = map[string]any{"retry_after": e.ra}
	}
	writeJSON(w, e.code, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
