package slacktest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

func channelType(ch string) string {
	switch {
	case strings.HasPrefix(ch, "D"):
		return "im"
	case strings.HasPrefix(ch, "G"):
		return "group"
	}
	return "channel"
}

// EventCallback wraps an inner event as Slack's event_callback body (the
// body of an Events API request and the payload of an events_api
// envelope) with a fresh event_id.
func (s *Server) EventCallback(event map[string]any) (eventID string, body []byte) {
	s.mu.Lock()
	s.eventN++
	eventID = fmt.Sprintf("Ev%08d", s.eventN)
	s.mu.Unlock()
	body, err := json.Marshal(map[string]any{
		"token": "legacy-verification-token", "team_id": TeamID, "api_app_id": AppID,
		"event": event, "type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(),
		"event_context":  "4-eyJldCI6Im1lc3NhZ2UifQ",
		"authorizations": []map[string]any{{"team_id": TeamID, "user_id": BotUserID, "is_bot": true}},
		"authed_users":   []string{BotUserID},
	})
	if err != nil {
		panic(err)
	}
	return eventID, body
}

// Mention stores a message of user mentioning the bot ("<@U0BOT> text") in
// channel (in thread, when not "") and returns its ts and its app_mention
// event.
func (s *Server) Mention(channel, user, text, thread string) (string, map[string]any) {
	full := "<@" + BotUserID + "> " + text
	ts := s.addUserMessage(channel, user, thread, full)
	ev := map[string]any{"type": "app_mention", "user": user, "text": full, "ts": ts, "channel": channel,
		"event_ts": ts, "client_msg_id": "msg-" + ts, "team": TeamID,
		"blocks": []any{map[string]any{"type": "rich_text", "block_id": "b" + ts}}}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	return ts, ev
}

// Say stores a message of user in channel (in thread, when not "") and
// returns its ts and its message event.
func (s *Server) Say(channel, user, text, thread string) (string, map[string]any) {
	ts := s.addUserMessage(channel, user, thread, text)
	ev := map[string]any{"type": "message", "user": user, "text": text, "ts": ts, "channel": channel,
		"channel_type": channelType(channel), "event_ts": ts, "client_msg_id": "msg-" + ts, "team": TeamID}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	return ts, ev
}

// OtherBotSays returns the message event of another app's bot posting in
// a thread.
func (s *Server) OtherBotSays(channel, botID, text, thread string) map[string]any {
	ts := s.NextTS()
	ev := map[string]any{"type": "message", "subtype": "bot_message", "bot_id": botID, "username": "otherbot",
		"text": text, "ts": ts, "channel": channel, "channel_type": channelType(channel), "event_ts": ts}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	return ev
}

// SlashCommand returns the form Slack posts for "/opsgate text", with a
// response_url served by the fake.
func (s *Server) SlashCommand(channel, user, userName, text string) url.Values {
	name := "opsgate-ops"
	if strings.HasPrefix(channel, "D") {
		name = "directmessage"
	}
	return url.Values{
		"token": {"legacy-verification-token"}, "team_id": {TeamID}, "team_domain": {"opsgate-test"},
		"channel_id": {channel}, "channel_name": {name}, "user_id": {user}, "user_name": {userName},
		"command": {"/opsgate"}, "text": {text}, "api_app_id": {AppID}, "is_enterprise_install": {"false"},
		"response_url": {s.newResponseURL()}, "trigger_id": {fmt.Sprintf("trig.%d", time.Now().UnixNano())},
	}
}

// Click returns the block_actions payload of user pressing button on msg.
func (s *Server) Click(user, userName string, msg Message, button Element) []byte {
	body, err := json.Marshal(map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": user, "username": userName, "name": userName, "team_id": TeamID},
		"api_app_id": AppID, "token": "legacy-verification-token",
		"container": map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": msg.Channel,
			"is_ephemeral": false, "thread_ts": msg.ThreadTS},
		"trigger_id": fmt.Sprintf("trig.%d", time.Now().UnixNano()),
		"team":       map[string]any{"id": TeamID, "domain": "opsgate-test"},
		"channel":    map[string]any{"id": msg.Channel, "name": "opsgate-ops"},
		"message": map[string]any{"type": "message", "user": msg.User, "bot_id": msg.BotID, "ts": msg.TS,
			"thread_ts": msg.ThreadTS, "text": msg.Text, "blocks": msg.Blocks},
		"response_url": s.newResponseURL(),
		"actions": []map[string]any{{"action_id": button.ActionID, "block_id": "actions", "value": button.Value,
			"style": button.Style, "type": "button", "action_ts": fmt.Sprintf("%d.000100", time.Now().Unix()),
			"text": map[string]any{"type": "plain_text", "text": button.Label(), "emoji": true}}},
	})
	if err != nil {
		panic(err)
	}
	return body
}

// SendEvent sends an events_api envelope for event and returns the
// envelope id and the event id.
func (s *Server) SendEvent(t testing.TB, event map[string]any) (envelopeID, eventID string) {
	t.Helper()
	eventID, body := s.EventCallback(event)
	return s.SendEnvelope(t, "events_api", json.RawMessage(body), 0), eventID
}

// SendCommand sends a slash_commands envelope for the form of SlashCommand.
func (s *Server) SendCommand(t testing.TB, form url.Values) string {
	t.Helper()
	payload := map[string]string{}
	for k := range form {
		payload[k] = form.Get(k)
	}
	return s.SendEnvelope(t, "slash_commands", payload, 0)
}

// SendClick sends an interactive envelope for a payload of Click.
func (s *Server) SendClick(t testing.TB, payload []byte) string {
	t.Helper()
	return s.SendEnvelope(t, "interactive", json.RawMessage(payload), 0)
}

// SendEventOn is SendEvent on the i-th open connection (SendEnvelopeOn).
func (s *Server) SendEventOn(t testing.TB, i int, event map[string]any) (envelopeID, eventID string) {
	t.Helper()
	eventID, body := s.EventCallback(event)
	return s.SendEnvelopeOn(t, i, "events_api", json.RawMessage(body)), eventID
}

// SendClickOn is SendClick on the i-th open connection (SendEnvelopeOn).
func (s *Server) SendClickOn(t testing.TB, i int, payload []byte) string {
	t.Helper()
	return s.SendEnvelopeOn(t, i, "interactive", json.RawMessage(payload))
}
