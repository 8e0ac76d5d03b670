package main

import (
	"context"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
)

// chatConversation is the conversation `opsgate chat` starts in.
type chatConversation struct {
	key  string
	how  string // "new", "resumed", "continued"
	note string // something the user should know about the choice
}

// chooseConversation picks the conversation of user: the named one, the
// most recent one (resume), else a new one.
func chooseConversation(ctx context.Context, store core.ConversationStore, user string, resume bool, name string) (chatConversation, error) {
	fresh := chatConversation{key: terminal.ConvKey(user, terminal.NewConvID(time.Now())), how: "new"}
	switch {
	case name != "":
		key := terminal.ConvKey(user, name)
		cs, err := store.Conversations(ctx, core.ConversationFilter{KeyPrefix: key})
		if err != nil {
			return chatConversation{}, fmt.Errorf("chat: conversation %s: %w", name, err)
		}
		for _, c := range cs {
			if c.Key == key {
				return chatConversation{key: key, how: "continued"}, nil
			}
		}
		return chatConversation{key: key, how: "new"}, nil
	case resume:
		cs, err := store.Conversations(ctx, core.ConversationFilter{KeyPrefix: terminal.ConvPrefix(user), Limit: 1})
		if err != nil {
			return chatConversation{}, fmt.Errorf("chat: find the conversation to resume: %w", err)
		}
		if len(cs) == 0 {
			fresh.note = "no earlier terminal conversation to resume; starting a new one"
			return fresh, nil
		}
		return chatConversation{key: cs[0].Key, how: "resumed"}, nil
	}
	return fresh, nil
}

// banner says which conversation is in use and how to come back to it.
func (c chatConversation) banner() string {
	id := terminal.Sanitize(terminal.ConvID(c.key))
	s := fmt.Sprintf("conversation %s (%s; `opsgate chat --conversation %s` continues it)", id, c.how, id)
	if c.note != "" {
		s = c.note + "\n" + s
	}
	return s
}
