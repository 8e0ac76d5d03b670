package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/opsgate/opsgate/adapters/render"
)

// Telegram has no threads: an incident (docs/design.md §19) is a message in
// the chat, and its conversation "telegram:<bot>:<chat>:r<message id>"
// posts its answers as replies to that message. A reply to the message,
// or to one of those answers, continues the incident rather than the
// chat's current conversation.

// rootEpoch marks the conversation key of a message's replies.
const rootEpoch = "r"

// PostRoot posts an incident's root message in chat and returns the
// conversation of its replies and the root's reference ("<chat>/<id>").
func (a *Adapter) PostRoot(ctx context.Context, chat, text, _ string) (thread, root string, err error) {
	id, err := strconv.ParseInt(chat, 10, 64)
	if err != nil {
		return "", "", fmt.Errorf("telegram: post an incident in %q: not a chat id", chat)
	}
	ref, err := platform{a}.Post(ctx, ConvKey(a.botID, id, ""), render.Message{Text: text})
	if err != nil {
		return "", "", fmt.Errorf("telegram: post an incident in %d: %w", id, err)
	}
	return ConvKey(a.botID, id, rootEpoch+string(ref)), chat + "/" + string(ref), nil
}

// EditRoot replaces the text of a root PostRoot posted.
func (a *Adapter) EditRoot(ctx context.Context, root, text string) error {
	chat, msg, ok := strings.Cut(root, "/")
	id, err := strconv.ParseInt(chat, 10, 64)
	if !ok || err != nil || msg == "" {
		return fmt.Errorf("telegram: %q is not a root message reference (<chat>/<message>)", root)
	}
	if err := (platform{a}).Edit(ctx, ConvKey(a.botID, id, ""), render.MsgRef(msg), render.Message{Text: text}); err != nil {
		return fmt.Errorf("telegram: edit the root message %s: %w", root, err)
	}
	return nil
}

// Say posts text in the conversation thread (as a reply to its root), in
// order with its runs' messages.
func (a *Adapter) Say(_ context.Context, thread, text string) error {
	if _, err := chatOf(thread); err != nil {
		return err
	}
	a.sender.Say(thread, text)
	return nil
}

// SetThreads tells the adapter which reply conversations exist beyond
// those it posted in since it started: known reports whether a
// conversation key made of a replied-to message ("…:r<id>") is one (an
// incident's, after a restart or on another replica).
func (a *Adapter) SetThreads(known func(ctx context.Context, convKey string) bool) {
	a.mu.Lock()
	a.threadKnown = known
	a.mu.Unlock()
}

// replyTo is the message a conversation's posts reply to: the root of a
// reply conversation, else 0.
func replyTo(conv string) int {
	parts := strings.Split(conv, ":")
	if len(parts) != 4 || !strings.HasPrefix(parts[3], rootEpoch) {
		return 0
	}
	id, err := strconv.Atoi(strings.TrimPrefix(parts[3], rootEpoch))
	if err != nil {
		return 0
	}
	return id
}

// replyConversation is the reply conversation a message continues, or ""
// for the chat's current one.
func (a *Adapter) replyConversation(ctx context.Context, chat int64, replied int) string {
	if key := a.replies.get(chat, replied); key != "" {
		return key
	}
	key := ConvKey(a.botID, chat, rootEpoch+strconv.Itoa(replied))
	a.mu.Lock()
	known := a.threadKnown
	a.mu.Unlock()
	if known != nil && known(ctx, key) {
		return key
	}
	return ""
}

// replyIndex remembers which reply conversation each message the bot
// posted there belongs to (the latest maxReplyIndex of them).
type replyIndex struct {
	mu   sync.Mutex
	m    map[string]string
	ring []string
	next int
}

const maxReplyIndex = 10000

// newReplyIndex returns an empty index. The ring grows as replies are
// posted: allocated whole, it was 160 KB at every start of a Telegram
// adapter that may never post in an incident (issue 25).
func newReplyIndex() *replyIndex {
	return &replyIndex{m: map[string]string{}}
}

func (r *replyIndex) put(chat int64, msg int, conv string) {
	k := strconv.FormatInt(chat, 10) + "/" + strconv.Itoa(msg)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ring) < maxReplyIndex {
		r.ring = append(r.ring, k)
	} else {
		delete(r.m, r.ring[r.next])
		r.ring[r.next] = k
		r.next = (r.next + 1) % maxReplyIndex
	}
	r.m[k] = conv
}

func (r *replyIndex) get(chat int64, msg int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[strconv.FormatInt(chat, 10)+"/"+strconv.Itoa(msg)]
}
