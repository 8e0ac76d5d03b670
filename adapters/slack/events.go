package slack

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/slack-go/slack/slackevents"
)

// onEvent handles an Events API event (either transport), after the ack.
func (a *Adapter) onEvent(ctx context.Context, ev slackevents.EventsAPIEvent) {
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		a.onMention(ctx, e)
	case *slackevents.MessageEvent:
		a.onMessage(ctx, e)
	}
}

// said is a person's message addressed to the bot.
type said struct {
	channel, thread, ts, user, text string
}

// onMention starts a thread on the mentioning message, or continues the
// thread it is in. Mentions in direct messages are handled as messages.
func (a *Adapter) onMention(ctx context.Context, e *slackevents.AppMentionEvent) {
	if e.BotID != "" || e.User == "" || isDM(e.Channel) || e.Edited != nil {
		return
	}
	me, err := a.identify(ctx)
	if err != nil {
		a.log.Error("mention dropped", "err", err)
		return
	}
	if e.User == me.userID {
		return
	}
	thread := e.ThreadTimeStamp
	if thread == "" {
		thread = e.TimeStamp
	}
	m := said{channel: e.Channel, thread: thread, ts: e.TimeStamp, user: e.User, text: inboundText(e.Text, me.userID)}
	if reason := a.refusal(e.Channel, e.User); reason != "" {
		a.ephemeral(ctx, e.Channel, e.User, thread, reason)
		return
	}
	a.known.set(e.Channel, thread, true)
	a.converse(ctx, me, m)
}

// onMessage continues the bot's threads without a mention, and handles
// direct messages. Everything else (other people's chatter, edits, the
// bot's own posts and other bots') is ignored.
func (a *Adapter) onMessage(ctx context.Context, e *slackevents.MessageEvent) {
	switch e.SubType {
	case "", "thread_broadcast", "file_share":
	default:
		return
	}
	if e.BotID != "" || e.User == "" {
		return
	}
	me, err := a.identify(ctx)
	if err != nil {
		a.log.Error("message dropped", "err", err)
		return
	}
	if e.User == me.userID {
		return
	}
	m := said{channel: e.Channel, thread: e.ThreadTimeStamp, ts: e.TimeStamp, user: e.User, text: inboundText(e.Text, me.userID)}
	if isDM(e.Channel) || e.ChannelType == "im" {
		if m.thread == "" {
			m.thread = m.ts
		}
		if reason := a.refusal(e.Channel, e.User); reason != "" {
			a.ephemeral(ctx, e.Channel, e.User, m.thread, reason)
			return
		}
		a.known.set(e.Channel, m.thread, true)
		a.converse(ctx, me, m)
		return
	}
	// In a channel: only replies in the bot's threads. A reply that
	// mentions the bot also comes as app_mention, which handles it.
	if m.thread == "" || m.thread == m.ts || strings.Contains(e.Text, "<@"+me.userID+">") {
		return
	}
	if !a.inBotThread(ctx, me, e.Channel, m.thread) {
		return
	}
	if reason := a.refusal(e.Channel, e.User); reason != "" {
		a.ephemeral(ctx, e.Channel, e.User, m.thread, reason)
		return
	}
	a.converse(ctx, me, m)
}

// converse hands a message to the engine, or stops the thread's run.
func (a *Adapter) converse(ctx context.Context, me identity, m said) {
	key := ConvKey(me.teamID, m.channel, m.thread)
	eng := a.getEngine()
	switch {
	case eng == nil:
		a.log.Error("message dropped: no engine set", "conv", key)
		a.ephemeral(ctx, m.channel, m.user, m.thread, "opsgate is starting; try again in a moment.")
	case m.text == "":
		a.ephemeral(ctx, m.channel, m.user, m.thread, helpText)
	case isStop(m.text):
		a.stop(ctx, eng, key, m)
	default:
		in := core.Inbound{ConvKey: key, MessageID: m.ts, User: a.actor(ctx, m.user, ""), Text: m.text, Time: tsTime(m.ts)}
		err := eng.Handle(ctx, in)
		if reply, refused := render.RefusalReply(err); refused {
			a.ephemeral(ctx, m.channel, m.user, m.thread, escape(reply))
			return
		}
		if err != nil {
			a.log.Error("engine refused a message", "conv", key, "err", err)
			a.ephemeral(ctx, m.channel, m.user, m.thread, "⚠️ I could not take that message: "+escape(err.Error()))
		}
	}
}

// stop stops the thread's run. A "stop" that is not a reply has no thread
// of its own (it would start one): it stops every run of the channel, as
// "/opsgate stop" does.
func (a *Adapter) stop(ctx context.Context, eng Engine, key string, m said) {
	keys := []string{key}
	if m.thread == m.ts {
		keys = a.sender.convsIn(m.channel)
	}
	n := 0
	for _, k := range keys {
		if eng.Stop(ctx, k) {
			n++
		}
	}
	switch {
	case n == 0:
		a.ephemeral(ctx, m.channel, m.user, m.thread, "Nothing is running here.")
	case m.thread == m.ts:
		a.ephemeral(ctx, m.channel, m.user, "", stoppedText(n))
	}
}

func stoppedText(n int) string {
	if n == 1 {
		return "⏹ Stopped 1 conversation."
	}
	return fmt.Sprintf("⏹ Stopped %d conversations.", n)
}

// refusal returns why user may not use the bot in channel, or "".
func (a *Adapter) refusal(channel, user string) string {
	if !a.users.empty() && !a.users.has(user) {
		return "🚫 Sorry, you are not on the list of people who may use opsgate (`slack.allowed_users`)."
	}
	if isDM(channel) {
		if a.users.empty() {
			return "🚫 opsgate does not answer direct messages here; ask in one of its channels (`slack.allowed_users` enables DMs)."
		}
		return ""
	}
	if !a.channels.has(channel) {
		return "🚫 opsgate is not enabled in this channel (`slack.channels`)."
	}
	return ""
}

// isStop reports whether a message asks to stop the thread's run.
func isStop(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	t = strings.TrimRight(t, ".!")
	return t == "stop" || core.IsStopCommand(t)
}

// slackMarkup matches Slack's <…> markup in message text.
// Compiled on the first Slack message, not at every start of any platform.
var slackMarkup = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<([^<>]*)>`) })

// inboundText turns the text of a Slack message into what the model
// reads: the bot's own mention removed, <@U…> as @U…, <#C…|name> as
// #name, links as their URL (with the label, when different), and
// entities decoded.
func inboundText(text, botUserID string) string {
	text = slackMarkup().ReplaceAllStringFunc(text, func(s string) string {
		inner := s[1 : len(s)-1]
		target, label, hasLabel := strings.Cut(inner, "|")
		switch {
		case target == "@"+botUserID:
			return ""
		case strings.HasPrefix(target, "@"), strings.HasPrefix(target, "#"):
			if hasLabel && label != "" {
				return target[:1] + strings.TrimPrefix(label, target[:1])
			}
			return target
		case strings.HasPrefix(target, "!"):
			if hasLabel && label != "" {
				return label
			}
			name, _, _ := strings.Cut(target[1:], "^")
			return "@" + name
		case hasLabel && label != "" && label != target:
			return label + " (" + target + ")"
		}
		return target
	})
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	return strings.TrimSpace(text)
}

// tsTime reads a Slack timestamp ("1700000000.000100").
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000)
}
