package discordtest

import (
	"encoding/json"
	"time"
)

// Channel types on the wire.
const (
	typeGuildText    = 0
	typeDM           = 1
	typePublicThread = 11
)

// User is a Discord user as the fake knows it.
type User struct {
	ID   string
	Name string
	Bot  bool
}

func (u User) wire() map[string]any {
	return map[string]any{"id": u.ID, "username": u.Name, "global_name": u.Name, "bot": u.Bot, "discriminator": "0"}
}

// Channel is a guild text channel, a thread or a DM.
type Channel struct {
	ID      string
	GuildID string // empty for DMs
	Type    int
	// ParentID and OwnerID: threads only.
	ParentID string
	OwnerID  string
	Name     string
	// Recipient: DMs only.
	Recipient User
}

// IsThread reports whether the channel is a thread.
func (c Channel) IsThread() bool { return c.Type == typePublicThread }

func (c *Channel) wire() map[string]any {
	m := map[string]any{"id": c.ID, "type": c.Type, "name": c.Name}
	if c.GuildID != "" {
		m["guild_id"] = c.GuildID
	}
	if c.IsThread() {
		m["parent_id"] = c.ParentID
		m["owner_id"] = c.OwnerID
		m["thread_metadata"] = map[string]any{"archived": false, "auto_archive_duration": 1440, "locked": false}
	}
	if c.Type == typeDM {
		m["recipients"] = []any{c.Recipient.wire()}
	}
	return m
}

// Button is a button of a message's action rows.
type Button struct {
	Label    string
	CustomID string
	Style    int
}

// Message is a message as the fake stores it: its current state after
// every edit.
type Message struct {
	ID        string
	ChannelID string
	GuildID   string
	Author    User
	Content   string
	Buttons   []Button
	// Ephemeral messages are seen only by the user of their interaction.
	Ephemeral bool
	// Interaction is the token of the interaction the message answers
	// (original responses and followups), if any.
	Interaction string
	// Deferred: an original response still showing "thinking…".
	Deferred bool
	// Thread is the id of the thread started from this message.
	Thread    string
	Mentions  []User
	Created   time.Time
	Edited    time.Time
	EditCount int
}

func (m *Message) wire() map[string]any {
	w := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "author": m.Author.wire(), "content": m.Content,
		"timestamp": m.Created.Format(time.RFC3339Nano), "type": 0, "tts": false,
		"mention_everyone": false, "pinned": false, "embeds": []any{}, "attachments": []any{},
	}
	if m.GuildID != "" {
		w["guild_id"] = m.GuildID
	}
	if !m.Edited.IsZero() {
		w["edited_timestamp"] = m.Edited.Format(time.RFC3339Nano)
	}
	mentions := []any{}
	for _, u := range m.Mentions {
		mentions = append(mentions, u.wire())
	}
	w["mentions"] = mentions
	flags := 0
	if m.Ephemeral {
		flags |= 64
	}
	if m.Deferred {
		flags |= 128 // LOADING
	}
	w["flags"] = flags
	w["components"] = componentsWire(m.Buttons)
	return w
}

func componentsWire(bs []Button) []any {
	if len(bs) == 0 {
		return []any{}
	}
	var row []any
	for _, b := range bs {
		row = append(row, map[string]any{"type": 2, "label": b.Label, "style": b.Style, "custom_id": b.CustomID})
	}
	return []any{map[string]any{"type": 1, "components": row}}
}

// wireComponent is a component as clients send it.
type wireComponent struct {
	Type       int             `json:"type"`
	Label      string          `json:"label"`
	Style      int             `json:"style"`
	CustomID   string          `json:"custom_id"`
	URL        string          `json:"url"`
	Components []wireComponent `json:"components"`
}

// wireMessage is the body of a message create or edit. Pointers tell a
// field left out of an edit from one set to empty.
type wireMessage struct {
	Content         *string          `json:"content"`
	Components      *[]wireComponent `json:"components"`
	Flags           int              `json:"flags"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
		Users []string `json:"users"`
	} `json:"allowed_mentions"`
}

// buttons flattens and validates components as Discord does.
func buttons(cs []wireComponent) ([]Button, string) {
	if len(cs) > 5 {
		return nil, "components: at most 5 action rows"
	}
	var out []Button
	seen := map[string]bool{}
	for _, row := range cs {
		if row.Type != 1 {
			return nil, "components: top-level components must be action rows"
		}
		if len(row.Components) == 0 || len(row.Components) > 5 {
			return nil, "components: an action row holds 1 to 5 buttons"
		}
		for _, c := range row.Components {
			if c.Type != 2 {
				return nil, "components: only buttons are supported by the fake"
			}
			if c.Style < 1 || c.Style > 5 {
				return nil, "components: invalid button style"
			}
			if c.Style != 5 && (len(c.CustomID) == 0 || len(c.CustomID) > 100) {
				return nil, "components: custom_id must be 1 to 100 characters"
			}
			if len([]rune(c.Label)) > 80 {
				return nil, "components: label must be at most 80 characters"
			}
			if seen[c.CustomID] {
				return nil, "components: custom_id must be unique within a message"
			}
			seen[c.CustomID] = true
			out = append(out, Button{Label: c.Label, CustomID: c.CustomID, Style: c.Style})
		}
	}
	return out, ""
}

// apiError is Discord's JSON error body.
type apiError struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
