package discord

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Conversation titles name incident threads (docs/design.md §14). The engine emits
// conversation.title.generated twice in a conversation's life: when it
// starts (its first message, cut to 60 characters) and after three
// exchanges (a title the model wrote). A thread the bot started is named
// after the request already, so only the second renames it: Discord
// allows a thread two renames per 10 minutes, and the start title would
// only shorten a long request's name. Threads somebody else started,
// channels and DMs keep their names.

// renameTimeout bounds one rename, 429s waited out included. A thread
// renamed twice in the last 10 minutes is refused for minutes: the rename
// is then given up and logged.
const renameTimeout = time.Minute

// retitle renames the thread of a conversation after its title, in the
// background and in order per thread: Send never waits for Discord. A
// rename that fails is logged; Close waits for those still going.
func (a *Adapter) retitle(key, title string) {
	guild, channel, err := parseKey(key)
	if err != nil || guild == "" || strings.TrimSpace(title) == "" {
		return // DMs are not threads
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.renames.Add(1)
	a.mu.Unlock()
	a.renameQueue.push(channel, func() {
		defer a.renames.Done()
		ctx, cancel := context.WithTimeout(a.ctx, renameTimeout)
		defer cancel()
		a.rename(ctx, channel, title)
	})
}

// rename names a thread the bot started after title, unless it has that
// name already or title is the conversation's first message cut short.
func (a *Adapter) rename(ctx context.Context, channel, title string) {
	pl, err := a.place(ctx, channel)
	if err != nil {
		a.log.Warn("rename a thread after its conversation's title", "thread", channel, "err", err)
		return
	}
	bot := a.bot()
	if !pl.thread || bot == "" || pl.owner != bot {
		return
	}
	name := threadName(title)
	if !a.names.wants(channel, title, name, a.stateName(channel)) {
		return
	}
	err = withRetry(ctx, func() error {
		_, err := a.dg.ChannelEdit(channel, &discordgo.ChannelEdit{Name: name}, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		a.log.Warn("rename a thread after its conversation's title", "thread", channel, "name", name, "err", err)
		return
	}
	a.names.named(channel, name)
	a.log.Info("thread renamed after its conversation's title", "thread", channel, "name", name)
}

// stateName is a channel's name in the gateway state, or "".
func (a *Adapter) stateName(channel string) string {
	c, err := a.dg.State.Channel(channel)
	if err != nil {
		return ""
	}
	a.dg.State.RLock()
	defer a.dg.State.RUnlock()
	return c.Name
}

// maxNamed bounds threadNames; a thread forgotten is looked up again.
const maxNamed = 4096

// threadNames remembers the names of threads the adapter started, renamed
// or looked up, and for a thread it started, the text it was started for
// until the conversation's first title has come.
type threadNames struct {
	mu sync.Mutex
	m  map[string]namedThread
}

type namedThread struct {
	name   string
	origin string
}

func newThreadNames() *threadNames { return &threadNames{m: map[string]namedThread{}} }

// started records a thread the adapter started, named name, for origin
// (the request, or the message the thread hangs from).
func (n *threadNames) started(id, name, origin string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.putLocked(id, namedThread{name: name, origin: origin})
}

// named records a thread's name as it is now, keeping its origin.
func (n *threadNames) named(id, name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.m[id]
	e.name = name
	n.putLocked(id, e)
}

func (n *threadNames) putLocked(id string, e namedThread) {
	if _, ok := n.m[id]; !ok && len(n.m) >= maxNamed {
		for old := range n.m {
			delete(n.m, old)
			break
		}
	}
	n.m[id] = e
}

// wants reports whether a thread must be renamed to name for title: not
// when it has that name already (in the gateway state, current, or as
// last known), nor when title is the start title of the conversation the
// thread was started for, that is, its origin cut short. The origin serves
// once: later titles are the model's.
func (n *threadNames) wants(id, title, name, current string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	e, known := n.m[id]
	origin := e.origin
	if known && origin != "" {
		e.origin = ""
		n.m[id] = e
	}
	switch {
	case name == current, known && name == e.name:
		return false
	case origin != "" && startTitle(title, origin):
		return false
	}
	return true
}

// startTitle reports whether title is the engine's title of a conversation
// whose first message is in origin: a line of it, perhaps cut with "…".
func startTitle(title, origin string) bool {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(title), "…"))
	return t != "" && strings.Contains(origin, t)
}
