package discordtest

import (
	"encoding/json"
	"net/http"
	"time"
)

// Interaction callback types.
const (
	CallbackMessage         = 4 // CHANNEL_MESSAGE_WITH_SOURCE
	CallbackDeferredMessage = 5 // DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
	CallbackDeferredUpdate  = 6 // DEFERRED_UPDATE_MESSAGE
	CallbackUpdate          = 7 // UPDATE_MESSAGE
)

// interaction is an interaction the fake dispatched and its response state.
type interaction struct {
	id, token          string
	kind               int // 2 application command, 3 message component
	guildID, channelID string
	user               User
	message            string // component: the message clicked
	dispatched         time.Time

	acked     bool
	ackType   int
	ackedAt   time.Time
	original  string // the original response's message id
	followups []string
}

// Interaction is what a test sees of an interaction it injected.
type Interaction struct {
	ID, Token  string
	Dispatched time.Time
	// Acked, AckType and AckedAt: the first callback.
	Acked   bool
	AckType int
	AckedAt time.Time
	// Original is the original response's message id, if any.
	Original  string
	Followups []string
}

// Interaction returns the state of an injected interaction.
func (s *Server) Interaction(token string) (Interaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.interactions[token]
	if it == nil {
		return Interaction{}, false
	}
	return Interaction{ID: it.id, Token: it.token, Dispatched: it.dispatched, Acked: it.acked, AckType: it.ackType,
		AckedAt: it.ackedAt, Original: it.original, Followups: append([]string(nil), it.followups...)}, true
}

func (s *Server) callback(w http.ResponseWriter, r *http.Request) int {
	var body struct {
		Type int         `json:"type"`
		Data wireMessage `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return writeJSON(w, http.StatusBadRequest, apiError{"400: Bad Request", 0})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.interactions[r.PathValue("token")]
	switch {
	case it == nil || it.id != r.PathValue("id"):
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown interaction", codeUnknownInteraction})
	case it.acked:
		return writeJSON(w, http.StatusBadRequest, apiError{"Interaction has already been acknowledged.", codeAlreadyAcked})
	case time.Since(it.dispatched) > s.ackTimeout:
		// Discord forgets an interaction not answered within 3 s.
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown interaction", codeUnknownInteraction})
	}
	var bs []Button
	if body.Data.Components != nil {
		var msg string
		if bs, msg = buttons(*body.Data.Components); msg != "" {
			return writeJSON(w, http.StatusBadRequest, apiError{"Invalid Form Body: " + msg, codeInvalidForm})
		}
	}
	content := ""
	if body.Data.Content != nil {
		content = *body.Data.Content
	}
	switch body.Type {
	case CallbackMessage, CallbackDeferredMessage:
		m := &Message{ID: s.nextIDLocked(), ChannelID: it.channelID, GuildID: it.guildID, Author: s.Bot,
			Content: content, Buttons: bs, Ephemeral: body.Data.Flags&64 != 0, Interaction: it.token,
			Deferred: body.Type == CallbackDeferredMessage, Created: time.Now()}
		if !m.Deferred {
			if e, ok := checkContent(content, bs); !ok {
				return writeJSON(w, http.StatusBadRequest, e)
			}
		}
		s.messages[it.channelID] = append(s.messages[it.channelID], m)
		it.original = m.ID
	case CallbackDeferredUpdate, CallbackUpdate:
		if it.kind != 3 {
			return writeJSON(w, http.StatusBadRequest, apiError{"Interaction response type not valid for this interaction", codeInvalidForm})
		}
		it.original = it.message
		if body.Type == CallbackUpdate {
			m := s.findLocked(it.channelID, it.message)
			if m == nil {
				return writeJSON(w, http.StatusNotFound, apiError{"Unknown Message", codeUnknownMessage})
			}
			if status := s.applyEditLocked(discard{}, m, body.Data, bs); status != http.StatusOK {
				return writeJSON(w, status, apiError{"Invalid Form Body", codeInvalidForm})
			}
		}
	default:
		return writeJSON(w, http.StatusBadRequest, apiError{"Invalid Form Body: type", codeInvalidForm})
	}
	it.acked, it.ackType, it.ackedAt = true, body.Type, time.Now()
	return noContent(w)
}

// webhookInteractionLocked finds the interaction of a webhook call. s.mu must be held.
func (s *Server) webhookInteractionLocked(r *http.Request) *interaction {
	it := s.interactions[r.PathValue("token")]
	if it == nil || r.PathValue("app") != s.AppID || !it.acked {
		return nil
	}
	return it
}

func (s *Server) followup(w http.ResponseWriter, r *http.Request) int {
	wm, content, bs, status, ok := decodeNewMessage(w, r)
	if !ok {
		return status
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.webhookInteractionLocked(r)
	if it == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Webhook", codeUnknownWebhook})
	}
	var m *Message
	if o := s.findLocked(it.channelID, it.original); o != nil && o.Deferred {
		// The first followup after a deferred response replaces the
		// "thinking…" message, keeping its visibility.
		m = o
		m.Content, m.Buttons, m.Deferred, m.Edited = content, bs, false, time.Now()
	} else {
		m = &Message{ID: s.nextIDLocked(), ChannelID: it.channelID, GuildID: it.guildID, Author: s.Bot,
			Content: content, Buttons: bs, Ephemeral: wm.Flags&64 != 0, Interaction: it.token, Created: time.Now()}
		s.messages[it.channelID] = append(s.messages[it.channelID], m)
		it.followups = append(it.followups, m.ID)
	}
	if r.URL.Query().Get("wait") != "true" {
		return noContent(w)
	}
	return writeJSON(w, http.StatusOK, m.wire())
}

// webhookMessageLocked resolves {mid} ("@original" or a followup). s.mu must be held.
func (s *Server) webhookMessageLocked(it *interaction, mid string) *Message {
	if mid == "@original" {
		mid = it.original
	} else if mid != it.original {
		found := false
		for _, f := range it.followups {
			found = found || f == mid
		}
		if !found {
			return nil
		}
	}
	return s.findLocked(it.channelID, mid)
}

func (s *Server) getWebhookMessage(w http.ResponseWriter, r *http.Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.webhookInteractionLocked(r)
	if it == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Webhook", codeUnknownWebhook})
	}
	m := s.webhookMessageLocked(it, r.PathValue("mid"))
	if m == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Message", codeUnknownMessage})
	}
	return writeJSON(w, http.StatusOK, m.wire())
}

func (s *Server) editWebhookMessage(w http.ResponseWriter, r *http.Request) int {
	wm, bs, status, ok := decodeMessage(w, r)
	if !ok {
		return status
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.webhookInteractionLocked(r)
	if it == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Webhook", codeUnknownWebhook})
	}
	m := s.webhookMessageLocked(it, r.PathValue("mid"))
	if m == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Message", codeUnknownMessage})
	}
	return s.applyEditLocked(w, m, wm, bs)
}

// discard is a ResponseWriter for answers nobody reads.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
