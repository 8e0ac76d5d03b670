package memory

import (
	"strings"

	"github.com/opsgate/opsgate/memory/docs"
)

// ChannelOf returns the channel key of a conversation: the part of its key
// that every conversation of the same channel shares.
//
//	slack:<team>:<channel>:<thread>     slack:<team>:<channel>
//	telegram:<bot>:<chat>[:<epoch>]     telegram:<bot>:<chat>
//	discord:<guild>:<thread>            itself (a Discord conversation is its thread)
//	terminal:<user>:<id>                terminal:<user>
//	api:<client>:…                      api:<client>
//
// Any other key is its own channel.
func ChannelOf(convKey string) string {
	platform, _, _ := strings.Cut(convKey, ":")
	switch platform {
	case "slack", "telegram", "discord":
		return firstParts(convKey, 3)
	case "terminal":
		// The user part may hold colons; the id never does.
		if i := strings.LastIndexByte(convKey, ':'); i > len("terminal:") {
			return convKey[:i]
		}
	case "api":
		return firstParts(convKey, 2)
	}
	return convKey
}

// firstParts returns the first n colon-separated parts of key (all of it
// when it has fewer).
func firstParts(key string, n int) string {
	end := 0
	for range n {
		i := strings.IndexByte(key[end:], ':')
		if i < 0 {
			return key
		}
		end += i + 1
	}
	return key[:end-1]
}

// Visible returns the scopes a conversation sees: the workspace, its
// channel, the person's own user scope and the conversation itself.
// Nothing else: another user's notes or another channel's conventions are
// never retrieved. An empty person has no user scope.
func Visible(convKey, person string) []docs.Scope {
	scopes := []docs.Scope{docs.WorkspaceScope}
	if convKey != "" {
		scopes = append(scopes, docs.Scope{Kind: docs.Channel, Key: ChannelOf(convKey)})
	}
	if person != "" {
		scopes = append(scopes, docs.Scope{Kind: docs.User, Key: person})
	}
	if convKey != "" {
		scopes = append(scopes, docs.Scope{Kind: docs.Conversation, Key: convKey})
	}
	return scopes
}
