package discordtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf16"
)

// Discord's JSON error codes used by the fake.
const (
	codeUnknownChannel     = 10003
	codeUnknownMessage     = 10008
	codeUnknownWebhook     = 10015
	codeUnknownInteraction = 10062
	codeNotAuthor          = 50005
	codeMissingPermissions = 50013
	codeEmptyMessage       = 50006
	codeWrongChannelType   = 50024
	codeInvalidForm        = 50035
	codeAlreadyAcked       = 40060
	codeThreadExists       = 160004
)

const maxContent = 2000

func (s *Server) getGateway(w http.ResponseWriter, r *http.Request) int {
	return writeJSON(w, http.StatusOK, map[string]any{
		"url":    "ws://" + r.Host + "/gw",
		"shards": 1,
		"session_start_limit": map[string]any{
			"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1,
		},
	})
}

func (s *Server) getMe(w http.ResponseWriter, r *http.Request) int {
	return writeJSON(w, http.StatusOK, s.Bot.wire())
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[r.PathValue("ch")]
	if c == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Channel", codeUnknownChannel})
	}
	return writeJSON(w, http.StatusOK, c.wire())
}

// editChannel renames a channel or thread (PATCH /channels/{ch} with a
// name; other fields are ignored). The fake's bot has neither Manage
// Channels nor Manage Threads: it may rename the threads it started, and
// nothing else. A renamed thread is announced with THREAD_UPDATE.
func (s *Server) editChannel(w http.ResponseWriter, r *http.Request) int {
	var body struct {
		Name *string `json:"name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return writeJSON(w, http.StatusBadRequest, apiError{"400: Bad Request", 0})
	}
	s.mu.Lock()
	c := s.channels[r.PathValue("ch")]
	switch {
	case c == nil:
		s.mu.Unlock()
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Channel", codeUnknownChannel})
	case c.Type == typeDM:
		s.mu.Unlock()
		return writeJSON(w, http.StatusBadRequest, apiError{"Cannot execute action on a DM channel", codeWrongChannelType})
	case !c.IsThread() || c.OwnerID != s.Bot.ID:
		s.mu.Unlock()
		return writeJSON(w, http.StatusForbidden, apiError{"Missing Permissions", codeMissingPermissions})
	}
	if body.Name != nil {
		name := strings.TrimSpace(*body.Name)
		if n := len([]rune(name)); n < 1 || n > 100 {
			s.mu.Unlock()
			return writeJSON(w, http.StatusBadRequest, apiError{"Invalid Form Body: name: Must be between 1 and 100 in length.", codeInvalidForm})
		}
		c.Name = name
		s.renames[c.ID] = append(s.renames[c.ID], time.Now())
	}
	wire := c.wire()
	s.mu.Unlock()
	s.gw.dispatch("THREAD_UPDATE", wire)
	return writeJSON(w, http.StatusOK, wire)
}

// checkContent validates a message's content as Discord does.
func checkContent(content string, buttons []Button) (apiError, bool) {
	if n := len(utf16.Encode([]rune(content))); n > maxContent {
		return apiError{"Invalid Form Body: content: Must be 2000 or fewer in length.", codeInvalidForm}, false
	}
	if strings.TrimSpace(content) == "" && len(buttons) == 0 {
		return apiError{"Cannot send an empty message", codeEmptyMessage}, false
	}
	return apiError{}, true
}

// decodeNewMessage reads the body of a message being created, which must
// have valid content (an edit may leave the content out); it writes the
// error answer itself.
func decodeNewMessage(w http.ResponseWriter, r *http.Request) (wm wireMessage, content string, bs []Button, status int, ok bool) {
	if wm, bs, status, ok = decodeMessage(w, r); !ok {
		return wm, "", nil, status, false
	}
	if wm.Content != nil {
		content = *wm.Content
	}
	if e, valid := checkContent(content, bs); !valid {
		return wm, "", nil, writeJSON(w, http.StatusBadRequest, e), false
	}
	return wm, content, bs, 0, true
}

// decodeMessage reads a message body; it writes the error answer itself.
func decodeMessage(w http.ResponseWriter, r *http.Request) (wireMessage, []Button, int, bool) {
	var wm wireMessage
	if err := json.NewDecoder(r.Body).Decode(&wm); err != nil {
		return wm, nil, writeJSON(w, http.StatusBadRequest, apiError{"400: Bad Request: " + err.Error(), 0}), false
	}
	var bs []Button
	if wm.Components != nil {
		var msg string
		if bs, msg = buttons(*wm.Components); msg != "" {
			return wm, nil, writeJSON(w, http.StatusBadRequest, apiError{"Invalid Form Body: " + msg, codeInvalidForm}), false
		}
	}
	return wm, bs, 0, true
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request) int {
	_, content, bs, status, ok := decodeNewMessage(w, r)
	if !ok {
		return status
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[r.PathValue("ch")]
	if c == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Channel", codeUnknownChannel})
	}
	m := &Message{ID: s.nextIDLocked(), ChannelID: c.ID, GuildID: c.GuildID, Author: s.Bot, Content: content,
		Buttons: bs, Created: time.Now()}
	s.messages[c.ID] = append(s.messages[c.ID], m)
	return writeJSON(w, http.StatusOK, m.wire())
}

func (s *Server) editMessage(w http.ResponseWriter, r *http.Request) int {
	wm, bs, status, ok := decodeMessage(w, r)
	if !ok {
		return status
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findLocked(r.PathValue("ch"), r.PathValue("mid"))
	if m == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Message", codeUnknownMessage})
	}
	if m.Author.ID != s.Bot.ID || m.Interaction != "" {
		return writeJSON(w, http.StatusForbidden, apiError{"Cannot edit a message authored by another user", codeNotAuthor})
	}
	return s.applyEditLocked(w, m, wm, bs)
}

// applyEditLocked edits m as a PATCH of wm asks. s.mu must be held.
func (s *Server) applyEditLocked(w http.ResponseWriter, m *Message, wm wireMessage, bs []Button) int {
	content, buttons := m.Content, m.Buttons
	if wm.Content != nil {
		content = *wm.Content
	}
	if wm.Components != nil {
		buttons = bs
	}
	if e, ok := checkContent(content, buttons); !ok {
		return writeJSON(w, http.StatusBadRequest, e)
	}
	m.Content, m.Buttons, m.Deferred = content, buttons, false
	m.Edited = time.Now()
	m.EditCount++
	return writeJSON(w, http.StatusOK, m.wire())
}

func (s *Server) startThread(w http.ResponseWriter, r *http.Request) int {
	var body struct {
		Name                string `json:"name"`
		AutoArchiveDuration int    `json:"auto_archive_duration"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return writeJSON(w, http.StatusBadRequest, apiError{"400: Bad Request", 0})
	}
	if n := len([]rune(body.Name)); n < 1 || n > 100 {
		return writeJSON(w, http.StatusBadRequest, apiError{"Invalid Form Body: name: Must be between 1 and 100 in length.", codeInvalidForm})
	}
	s.mu.Lock()
	p := s.channels[r.PathValue("ch")]
	switch {
	case p == nil:
		s.mu.Unlock()
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Channel", codeUnknownChannel})
	case p.Type != typeGuildText:
		s.mu.Unlock()
		return writeJSON(w, http.StatusBadRequest, apiError{"Cannot execute action on this channel type", codeWrongChannelType})
	}
	m := s.findLocked(p.ID, r.PathValue("mid"))
	switch {
	case m == nil || m.Ephemeral:
		s.mu.Unlock()
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Message", codeUnknownMessage})
	case m.Thread != "":
		s.mu.Unlock()
		return writeJSON(w, http.StatusBadRequest, apiError{"A thread has already been created for this message", codeThreadExists})
	}
	// A thread started from a message has the message's id.
	c := &Channel{ID: m.ID, GuildID: p.GuildID, Type: typePublicThread, ParentID: p.ID, OwnerID: s.Bot.ID, Name: body.Name}
	s.channels[c.ID] = c
	m.Thread = c.ID
	wire := c.wire()
	s.mu.Unlock()
	created := map[string]any{"newly_created": true}
	for k, v := range wire {
		created[k] = v
	}
	s.gw.dispatch("THREAD_CREATE", created)
	return writeJSON(w, http.StatusCreated, wire)
}

func (s *Server) typing(w http.ResponseWriter, r *http.Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.channels[r.PathValue("ch")] == nil {
		return writeJSON(w, http.StatusNotFound, apiError{"Unknown Channel", codeUnknownChannel})
	}
	return noContent(w)
}

func (s *Server) putCommands(w http.ResponseWriter, r *http.Request) int {
	if r.PathValue("app") != s.AppID {
		return writeJSON(w, http.StatusForbidden, apiError{"Missing Access", 50001})
	}
	var cmds []map[string]any
	if err := json.NewDecoder(r.Body).Decode(&cmds); err != nil {
		return writeJSON(w, http.StatusBadRequest, apiError{"400: Bad Request", 0})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	guild := r.PathValue("guild")
	for _, c := range cmds {
		c["id"] = s.nextIDLocked()
		c["application_id"] = s.AppID
		if guild != "" {
			c["guild_id"] = guild
		}
		c["version"] = s.nextIDLocked()
	}
	s.commands[guild] = cmds
	return writeJSON(w, http.StatusOK, cmds)
}
