package slacktest

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Message is a message as the fake stores it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // "" for a top-level message
	User     string
	BotID    string
	Text     string // the text field: the notification fallback when Blocks are set
	Blocks   []Block
	Edits    int
}

// Block is a Block Kit block (the kinds opsgate uses).
type Block struct {
	Type     string    `json:"type"`
	BlockID  string    `json:"block_id,omitempty"`
	Text     *Text     `json:"text,omitempty"`
	Elements []Element `json:"elements,omitempty"`
}

// Text is a text object.
type Text struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Emoji    *bool  `json:"emoji,omitempty"`
	Verbatim bool   `json:"verbatim,omitempty"`
}

// Element is a block element; opsgate only uses buttons (and text in
// context blocks).
type Element struct {
	Type     string   `json:"type"`
	ActionID string   `json:"action_id,omitempty"`
	Value    string   `json:"value,omitempty"`
	Text     any      `json:"text,omitempty"` // a text object for buttons, a string in context blocks
	Style    string   `json:"style,omitempty"`
	Confirm  *Confirm `json:"confirm,omitempty"`
}

// Label returns a button's text.
func (e Element) Label() string {
	if m, ok := e.Text.(map[string]any); ok {
		s, _ := m["text"].(string)
		return s
	}
	s, _ := e.Text.(string)
	return s
}

// Confirm is a confirmation dialog.
type Confirm struct {
	Title   *Text  `json:"title"`
	Text    *Text  `json:"text"`
	Confirm *Text  `json:"confirm"`
	Deny    *Text  `json:"deny"`
	Style   string `json:"style,omitempty"`
}

// Slack's limits, as it enforces them (runes; the cumulative one is what
// chat.postMessage answers msg_blocks_too_long for).
const (
	maxSectionText = 3000
	maxBlocks      = 50
	maxBlockText   = 12000
	maxButtonText  = 75
	maxButtonValue = 2000
	maxActionID    = 255
)

// parseBlocks validates a blocks field and returns Slack's error code for
// what Slack would refuse.
func parseBlocks(raw string) ([]Block, string) {
	if raw == "" {
		return nil, ""
	}
	var blocks []Block
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return nil, "invalid_blocks_format"
	}
	if len(blocks) > maxBlocks {
		return nil, "invalid_blocks"
	}
	total := 0
	ids := map[string]bool{}
	for _, b := range blocks {
		switch b.Type {
		case "section":
			if b.Text == nil || (b.Text.Type != "mrkdwn" && b.Text.Type != "plain_text") {
				return nil, "invalid_blocks"
			}
			n := utf8.RuneCountInString(b.Text.Text)
			if n == 0 || n > maxSectionText || strings.TrimSpace(b.Text.Text) == "" {
				return nil, "invalid_blocks"
			}
			total += n
		case "actions":
			if len(b.Elements) == 0 || len(b.Elements) > 25 {
				return nil, "invalid_blocks"
			}
			for _, e := range b.Elements {
				l := utf8.RuneCountInString(e.Label())
				if e.Type != "button" || l == 0 || l > maxButtonText || len(e.Value) > maxButtonValue ||
					e.ActionID == "" || len(e.ActionID) > maxActionID || ids[e.ActionID] {
					return nil, "invalid_blocks"
				}
				if e.Style != "" && e.Style != "primary" && e.Style != "danger" {
					return nil, "invalid_blocks"
				}
				if c := e.Confirm; c != nil && (c.Title == nil || c.Text == nil || c.Confirm == nil || c.Deny == nil) {
					return nil, "invalid_blocks"
				}
				ids[e.ActionID] = true
				total += l
			}
		case "context", "divider":
		default:
			return nil, "invalid_blocks"
		}
	}
	if total > maxBlockText {
		return nil, "msg_blocks_too_long"
	}
	return blocks, ""
}

// wire is the message as Slack's API returns it.
func (m *Message) wire() map[string]any {
	w := map[string]any{"type": "message", "ts": m.TS, "text": m.Text}
	if m.User != "" {
		w["user"] = m.User
	}
	if m.BotID != "" {
		w["bot_id"] = m.BotID
		w["app_id"] = AppID
	}
	if m.ThreadTS != "" {
		w["thread_ts"] = m.ThreadTS
	}
	if len(m.Blocks) > 0 {
		w["blocks"] = m.Blocks
	}
	return w
}

// Sections returns the texts of the message's section blocks as sent.
func (m Message) Sections() []Text {
	var out []Text
	for _, b := range m.Blocks {
		if b.Type == "section" && b.Text != nil {
			out = append(out, *b.Text)
		}
	}
	return out
}

// Plain returns the message as a reader sees it: the sections, one after
// another, with their markup rendered away; the text field when there are
// no blocks.
func (m Message) Plain() string {
	if len(m.Blocks) == 0 {
		return Plain(m.Text)
	}
	var parts []string
	for _, t := range m.Sections() {
		if t.Type == "plain_text" {
			parts = append(parts, t.Text)
			continue
		}
		parts = append(parts, Plain(t.Text))
	}
	return strings.Join(parts, "\n")
}

// Buttons returns the message's buttons.
func (m Message) Buttons() []Element {
	var out []Element
	for _, b := range m.Blocks {
		if b.Type == "actions" {
			out = append(out, b.Elements...)
		}
	}
	return out
}

// Button returns the first button whose label contains label.
func (m Message) Button(label string) (Element, bool) {
	for _, e := range m.Buttons() {
		if strings.Contains(strings.ToLower(e.Label()), strings.ToLower(label)) {
			return e, true
		}
	}
	return Element{}, false
}

// Messages returns the messages of channel in thread (thread "" for the
// top-level ones) that match keep (nil keeps all), oldest first. A
// thread's root is not part of the thread.
func (s *Server) Messages(channel, thread string, keep func(Message) bool) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs {
		if m.Channel != channel || m.ThreadTS != thread || m.TS == thread {
			continue
		}
		if keep == nil || keep(*m) {
			out = append(out, *m)
		}
	}
	return out
}

// BotReplies returns what the bot posted in a thread ("" for top level).
func (s *Server) BotReplies(channel, thread string) []Message {
	return s.Messages(channel, thread, func(m Message) bool { return m.BotID == BotID })
}

// Message returns the message channel/ts.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.msgs {
		if m.Channel == channel && m.TS == ts {
			return *m, true
		}
	}
	return Message{}, false
}

// addUserMessage stores a message a person wrote (so that
// conversations.replies sees it) and returns its ts.
func (s *Server) addUserMessage(channel, user, thread, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{Channel: channel, TS: s.nextTSLocked(), ThreadTS: thread, User: user, Text: text}
	s.msgs = append(s.msgs, m)
	s.changeLocked()
	return m.TS
}
