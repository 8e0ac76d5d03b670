package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

const helpText = `I am **opsgate**, an on-call assistant. Ask me about your systems in plain words: I plan with a language model and use tools (Kubernetes, Helm, CI, …).

Nothing that changes anything runs without an approval: I post a card with **Approve** and **Deny** buttons and wait until an allowed person presses Approve.

/new – start a fresh conversation
/stop – stop what I am doing (the Stop button does the same)
/status – what is running and what waits for approval
/remember TEXT – keep a note in this chat's memory
/memory QUERY – search memory (runbooks, lessons, notes)
/forget PATH – archive a memory note you wrote
/timeline – what happened in this chat so far, with UTC times
/postmortem – a postmortem draft of it, kept in this chat's memory
/help – this text

In a group, mention me or reply to one of my messages.`

// refuseEvery is how often a user who is not allowed is told so.
const refuseEvery = 10 * time.Minute

// onMessage handles a message. An error means the engine did not take it.
func (a *Adapter) onMessage(ctx context.Context, m *tgbotapi.Message) error {
	if m.From == nil || m.From.IsBot || m.Chat == nil {
		return nil
	}
	text := strings.TrimSpace(m.Text)
	cmd, args, forUs := a.command(ctx, text)
	if !m.Chat.IsPrivate() {
		if cmd != "" && !forUs {
			return nil // another bot's command
		}
		if cmd == "" {
			stripped, mentioned := a.mention(ctx, text)
			replied := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == a.botID
			if !mentioned && !replied {
				return nil
			}
			text = stripped
		}
	}
	if !a.allowed[m.From.ID] {
		a.refuse(m.Chat.ID, m.From.ID)
		return nil
	}
	key := a.convKey(ctx, m.Chat.ID)
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.ID == a.botID {
		if k := a.replyConversation(ctx, m.Chat.ID, r.MessageID); k != "" {
			key = k
		}
	}
	switch cmd {
	case "":
	case "start", "help":
		a.sender.Say(key, helpText)
		return nil
	case "new":
		a.newConversation(ctx, m)
		return nil
	case "stop":
		if !a.engine().Stop(ctx, key) {
			a.sender.Say(key, "Nothing is running.")
		}
		return nil
	case "status":
		a.status(ctx, key)
		return nil
	case "remember", "memory", "forget", "timeline", "postmortem":
		// Memory and timeline commands: the engine answers them
		// (docs/design.md §14, §19).
	default:
		if args == "" {
			a.sender.Say(key, "Unknown command /"+cmd+". Try /help.")
			return nil
		}
	}
	if text == "" {
		if m.Chat.IsPrivate() {
			a.sender.Say(key, "I can only read text messages.")
		}
		return nil
	}
	err := a.engine().Handle(ctx, core.Inbound{
		ConvKey:   key,
		MessageID: strconv.Itoa(m.MessageID),
		User:      actorOf(m.From),
		Text:      text,
		Time:      m.Time(),
	})
	if reply, refused := render.RefusalReply(err); refused {
		// Answered, not retried: the engine refused it on purpose.
		a.sender.Say(key, reply)
		return nil
	}
	return err
}

// command parses "/name@bot args". forUs is false for a command addressed
// to another bot.
func (a *Adapter) command(ctx context.Context, text string) (name, args string, forUs bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, args, _ := strings.Cut(text[1:], " ")
	name, at, addressed := strings.Cut(word, "@")
	if name == "" {
		return "", "", false
	}
	forUs = true
	if addressed {
		me, err := a.me(ctx)
		forUs = err == nil && strings.EqualFold(at, me)
	}
	return strings.ToLower(name), strings.TrimSpace(args), forUs
}

// mention reports whether text mentions the bot, and returns it without
// the mention.
func (a *Adapter) mention(ctx context.Context, text string) (string, bool) {
	me, err := a.me(ctx)
	if err != nil || me == "" {
		return text, false
	}
	at := "@" + strings.ToLower(me)
	i := strings.Index(strings.ToLower(text), at)
	if i < 0 {
		return text, false
	}
	return strings.TrimSpace(strings.TrimRight(text[:i], " ") + " " + strings.TrimLeft(text[i+len(at):], " ")), true
}

// keeper is the engine's keeping of conversations, when it keeps them.
func (a *Adapter) keeper() chats.Keeper {
	k, _ := a.engine().(chats.Keeper)
	return k
}

// convKey returns the current conversation of a chat. A chat not seen
// since the start is looked up in the store, unless loadEpochs read them
// all (epochs.go): its current conversation is the one the latest /new
// started (epochs are message ids, which grow).
func (a *Adapter) convKey(ctx context.Context, chat int64) string {
	k := a.keeper()
	if k == nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		return ConvKey(a.botID, chat, a.epochs[chat])
	}
	if epoch, ok := a.knownEpoch(ctx, k, chat); ok {
		return ConvKey(a.botID, chat, epoch)
	}
	keys, err := k.ConversationKeys(ctx, ConvKey(a.botID, chat, "")+":")
	if err != nil {
		// Not cached: the next message looks again.
		a.log.Error("telegram: read the chat's current conversation", "chat", chat, "err", err)
		return ConvKey(a.botID, chat, "")
	}
	best, epoch := int64(-1), ""
	for _, key := range keys {
		e := strings.TrimPrefix(key, ConvKey(a.botID, chat, "")+":")
		if n, err := strconv.ParseInt(e, 10, 64); err == nil && n > best {
			best, epoch = n, e
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := a.epochs[chat]; ok { // a /new meanwhile wins
		return ConvKey(a.botID, chat, cur)
	}
	a.epochs[chat] = epoch
	return ConvKey(a.botID, chat, epoch)
}

// refuse tells a user who is not allowed so, at most every refuseEvery,
// and with their id, which an operator needs to allow them.
func (a *Adapter) refuse(chat, user int64) {
	a.mu.Lock()
	last, ok := a.refused[user]
	now := time.Now()
	if ok && now.Sub(last) < refuseEvery {
		a.mu.Unlock()
		return
	}
	a.refused[user] = now
	if len(a.refused) > 10000 {
		for u, t := range a.refused {
			if now.Sub(t) > refuseEvery {
				delete(a.refused, u)
			}
		}
	}
	a.mu.Unlock()
	a.log.Info("telegram: refused a user who is not in allowed_users", "user", user, "chat", chat)
	a.sender.Say(ConvKey(a.botID, chat, ""), fmt.Sprintf(
		"Sorry, I only work for the people in telegram.allowed_users. Your Telegram user id is %d.", user))
}

// newConversation starts a fresh conversation in the chat; what runs in
// the old one is stopped, so it does not keep posting into the new one.
func (a *Adapter) newConversation(ctx context.Context, m *tgbotapi.Message) {
	old := a.convKey(ctx, m.Chat.ID)
	stopped := a.engine().Stop(ctx, old)
	epoch := strconv.Itoa(m.MessageID)
	if k := a.keeper(); k != nil {
		// Stored before it is used, so a restart continues it.
		if err := k.StartConversation(ctx, ConvKey(a.botID, m.Chat.ID, epoch)); err != nil {
			a.log.Error("telegram: store the new conversation", "chat", m.Chat.ID, "err", err)
			a.sender.Say(old, "⚠️ I could not start a fresh conversation (the store did not answer); please try /new again.")
			return
		}
	}
	a.mu.Lock()
	a.epochs[m.Chat.ID] = epoch
	a.mu.Unlock()
	msg := "🆕 Started a fresh conversation."
	if stopped {
		msg += " What was running in the previous one was stopped."
	}
	a.sender.Say(a.convKey(ctx, m.Chat.ID), msg)
}

func (a *Adapter) status(ctx context.Context, key string) {
	st, err := a.engine().Status(ctx, key)
	if err != nil {
		a.log.Error("telegram: status", "conv", key, "err", err)
		a.sender.Say(key, "⚠️ I could not read the status; please try again.")
		return
	}
	var b strings.Builder
	if r := st.ActiveRun; r != nil {
		fmt.Fprintf(&b, "▶️ Working on a request since %s (model calls so far: %d).", r.StartedAt.UTC().Format("15:04 MST"), r.Iterations)
	} else {
		b.WriteString("Nothing is running.")
	}
	if st.Queued > 0 {
		fmt.Fprintf(&b, "\n%d message(s) wait their turn.", st.Queued)
	}
	for _, ap := range st.PendingApprovals {
		fmt.Fprintf(&b, "\n⏸ `%s` waits for approval (requested by %s, expires %s).",
			strings.ReplaceAll(ap.Tool, "`", "'"), ap.Requester, ap.ExpiresAt.UTC().Format("15:04 MST"))
	}
	a.sender.Say(key, b.String())
}
