package core

import "context"

// StartConversation stores the conversation key, creating it when missing,
// before its first message: an adapter that starts conversations of its
// own (Telegram's /new) finds it with ConversationKeys after a restart or
// on another replica.
func (e *Engine) StartConversation(ctx context.Context, key string) error {
	_, err := e.store.Conversation(ctx, key)
	return err
}

// ConversationKeys returns the keys of the stored conversations that start
// with prefix, the most recently active first. It is the one question an
// adapter asks about conversations besides Status, so that no adapter needs
// the store.
func (e *Engine) ConversationKeys(ctx context.Context, prefix string) ([]string, error) {
	cs, err := e.store.Conversations(ctx, ConversationFilter{KeyPrefix: prefix})
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.Key
	}
	return keys, nil
}
