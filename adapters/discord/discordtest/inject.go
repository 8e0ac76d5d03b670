package discordtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"
)

var mentionRE = regexp.MustCompile(`<@!?(\d+)>`)

// Mention returns the text that mentions the bot.
func (s *Server) Mention() string { return "<@" + s.Bot.ID + ">" }

// Say posts a message from u in a channel (a text channel, a thread or a
// DM) and dispatches MESSAGE_CREATE. <@id> in content mention users.
func (s *Server) Say(channelID string, u User, content string) (Message, error) {
	s.mu.Lock()
	c := s.channels[channelID]
	if c == nil {
		s.mu.Unlock()
		return Message{}, fmt.Errorf("discordtest: unknown channel %s", channelID)
	}
	m := &Message{ID: s.nextIDLocked(), ChannelID: c.ID, GuildID: c.GuildID, Author: u, Content: content, Created: time.Now()}
	for _, sm := range mentionRE.FindAllStringSubmatch(content, -1) {
		mu := User{ID: sm[1]}
		if sm[1] == s.Bot.ID {
			mu = s.Bot
		}
		m.Mentions = append(m.Mentions, mu)
	}
	s.messages[c.ID] = append(s.messages[c.ID], m)
	w := m.wire()
	if c.GuildID != "" {
		w["member"] = map[string]any{"roles": []any{}, "joined_at": m.Created.Format(time.RFC3339)}
	}
	out := copyMessage(m)
	s.changedLocked()
	s.mu.Unlock()
	if !s.gw.dispatch("MESSAGE_CREATE", w) {
		return out, fmt.Errorf("discordtest: no gateway session to dispatch to")
	}
	return out, nil
}

// Replay dispatches MESSAGE_CREATE again for a message, as Discord may
// after a reconnect.
func (s *Server) Replay(m Message) {
	s.mu.Lock()
	w := s.findLocked(m.ChannelID, m.ID).wire()
	if m.GuildID != "" {
		w["member"] = map[string]any{"roles": []any{}}
	}
	s.mu.Unlock()
	s.gw.dispatch("MESSAGE_CREATE", w)
}

// Command invokes the bot's /opsgate command as u in a channel and returns
// the interaction's token. sub is the subcommand ("request", "stop",
// "status"); args are its string options.
func (s *Server) Command(channelID string, u User, sub string, args map[string]string) (string, error) {
	var opts []any
	for k, v := range args {
		opts = append(opts, map[string]any{"name": k, "type": 3, "value": v})
	}
	data := map[string]any{"id": "1100000000000000009", "name": "opsgate", "type": 1,
		"options": []any{map[string]any{"name": sub, "type": 1, "options": opts}}}
	return s.interact(channelID, u, 2, "", data)
}

// Click presses a button of a message as u and returns the interaction's
// token. The button must be on the message, as in a real client.
func (s *Server) Click(channelID string, u User, messageID, customID string) (string, error) {
	s.mu.Lock()
	m := s.findLocked(channelID, messageID)
	found := false
	if m != nil {
		for _, b := range m.Buttons {
			found = found || b.CustomID == customID
		}
	}
	s.mu.Unlock()
	if !found {
		return "", fmt.Errorf("discordtest: message %s has no button %q", messageID, customID)
	}
	return s.interact(channelID, u, 3, messageID, map[string]any{"custom_id": customID, "component_type": 2})
}

func (s *Server) interact(channelID string, u User, kind int, messageID string, data map[string]any) (string, error) {
	var b [24]byte
	rand.Read(b[:])
	s.mu.Lock()
	c := s.channels[channelID]
	if c == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("discordtest: unknown channel %s", channelID)
	}
	it := &interaction{id: s.nextIDLocked(), token: "itok-" + hex.EncodeToString(b[:]), kind: kind,
		guildID: c.GuildID, channelID: c.ID, user: u, message: messageID}
	p := map[string]any{
		"id": it.id, "application_id": s.AppID, "type": kind, "token": it.token, "version": 1,
		"channel_id": c.ID, "data": data, "locale": "en-US", "app_permissions": "0",
	}
	if c.GuildID != "" {
		p["guild_id"] = c.GuildID
		p["member"] = map[string]any{"user": u.wire(), "roles": []any{}, "permissions": "0"}
		p["context"] = 0
	} else {
		p["user"] = u.wire()
		p["context"] = 1
	}
	if m := s.findLocked(channelID, messageID); m != nil {
		p["message"] = m.wire()
	}
	s.interactions[it.token] = it
	it.dispatched = time.Now()
	s.mu.Unlock()
	if !s.gw.dispatch("INTERACTION_CREATE", p) {
		return "", fmt.Errorf("discordtest: no gateway session to dispatch to")
	}
	return it.token, nil
}
