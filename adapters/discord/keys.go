package discord

import (
	"fmt"
	"strings"
	"unicode"
)

// keyPrefix starts every Discord conversation key.
const keyPrefix = "discord:"

// dmGuild stands for the guild of a direct message in conversation keys,
// as "@me" does in Discord's own URLs.
const dmGuild = "@me"

// ConvKey returns the conversation key of a guild thread (or of a DM
// channel when guild is empty): "discord:<guild>:<channel>".
func ConvKey(guild, channel string) string {
	if guild == "" {
		guild = dmGuild
	}
	return keyPrefix + guild + ":" + channel
}

// parseKey returns the guild ("" for a DM) and channel of a key.
func parseKey(key string) (guild, channel string, err error) {
	rest, ok := strings.CutPrefix(key, keyPrefix)
	guild, channel, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || !snowflake(channel) || guild != dmGuild && !snowflake(guild) {
		return "", "", fmt.Errorf("discord: %q is not a Discord conversation key (discord:<guild>:<channel>)", key)
	}
	if guild == dmGuild {
		guild = ""
	}
	return guild, channel, nil
}

// maxThreadName is Discord's limit on a thread's name, in characters.
const maxThreadName = 100

// threadName names an incident thread after its request: the first
// non-empty line, white space collapsed, leading and trailing markup
// trimmed, at most 100 characters.
func threadName(request string) string {
	line := ""
	for l := range strings.SplitSeq(request, "\n") {
		if line = strings.Join(strings.FieldsFunc(l, unicode.IsSpace), " "); line != "" {
			break
		}
	}
	line = strings.Trim(line, "`*_~>#|")
	line = strings.TrimSpace(line)
	if line == "" {
		return "opsgate request"
	}
	if r := []rune(line); len(r) > maxThreadName {
		line = strings.TrimSpace(string(r[:maxThreadName-1])) + "…"
	}
	return line
}

// stripMentions removes mentions of the bot from a message's text.
func stripMentions(text, botID string) string {
	if botID == "" {
		return strings.TrimSpace(text)
	}
	text = strings.ReplaceAll(text, "<@"+botID+">", " ")
	text = strings.ReplaceAll(text, "<@!"+botID+">", " ")
	return strings.TrimSpace(text)
}

// isStopWord reports whether a chat message means "stop": at 3 a.m.
// nobody should have to remember the slash.
func isStopWord(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	t = strings.TrimRight(t, "!.")
	return t == "stop" || t == "/stop"
}
