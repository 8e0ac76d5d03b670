package slack

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// threads remembers which threads the bot is part of. Threads it joined
// are remembered for a week; a lookup that found it absent, for minutes
// (it may be mentioned there later, which adds the thread at once).
type threads struct {
	mu sync.Mutex
	m  map[string]threadEntry
}

type threadEntry struct {
	mine bool
	at   time.Time
}

const (
	threadMemory   = 7 * 24 * time.Hour
	notMineMemory  = 5 * time.Minute
	maxThreadCache = 50_000
)

func newThreads() *threads { return &threads{m: map[string]threadEntry{}} }

func (t *threads) set(channel, ts string, mine bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if len(t.m) > maxThreadCache {
		for k, e := range t.m {
			if now.Sub(e.at) > notMineMemory {
				delete(t.m, k)
			}
		}
	}
	t.m[channel+"/"+ts] = threadEntry{mine: mine, at: now}
}

func (t *threads) lookup(channel, ts string) (mine, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[channel+"/"+ts]
	if !ok {
		return false, false
	}
	ttl := threadMemory
	if !e.mine {
		ttl = notMineMemory
	}
	if time.Since(e.at) > ttl {
		delete(t.m, channel+"/"+ts)
		return false, false
	}
	return e.mine, true
}

// inBotThread reports whether the bot is part of a thread: it started or
// joined it in this process, or (conversations.replies, which survives
// restarts and is the same on every replica) it posted in it or the
// thread starts with a mention of it — another replica may have taken the
// mention and not answered yet.
func (a *Adapter) inBotThread(ctx context.Context, me identity, channel, thread string) bool {
	if mine, ok := a.known.lookup(channel, thread); ok {
		return mine
	}
	var msgs []slack.Message
	err := a.call(ctx, channel, func(ctx context.Context) error {
		var err error
		msgs, _, _, err = a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: channel, Timestamp: thread, Limit: 200})
		return err
	})
	if err != nil {
		a.log.Warn("cannot tell whether the bot is in a thread", "channel", channel, "thread", thread, "err", err)
		return false
	}
	mine := false
	for i, m := range msgs {
		if m.User == me.userID || (me.botID != "" && m.BotID == me.botID) ||
			i == 0 && m.Timestamp == thread && strings.Contains(m.Text, "<@"+me.userID+">") {
			mine = true
			break
		}
	}
	a.known.set(channel, thread, mine)
	return mine
}
