package discord

import (
	"context"
	"fmt"
	"sync"

	"github.com/bwmarrin/discordgo"
)

// place is what the adapter needs to know about a channel: whether it is a
// thread, and then its parent and who started it.
type place struct {
	thread bool
	parent string
	owner  string
}

// root is the channel the allowlist is checked against: a thread's parent.
func (p place) root(channel string) string {
	if p.thread {
		return p.parent
	}
	return channel
}

func placeOf(c *discordgo.Channel) place {
	if c.IsThread() {
		return place{thread: true, parent: c.ParentID, owner: c.OwnerID}
	}
	return place{}
}

// placeCache remembers channels; a thread never changes parent or owner.
type placeCache struct {
	mu sync.Mutex
	m  map[string]place
}

func newPlaceCache() *placeCache { return &placeCache{m: map[string]place{}} }

func (c *placeCache) get(ch string) (place, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[ch]
	return p, ok
}

func (c *placeCache) put(ch string, p place) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= 50000 {
		clear(c.m)
	}
	c.m[ch] = p
}

// place returns what channel is: from the cache, the gateway state
// (threads announced by GUILD_CREATE and THREAD_CREATE), or the REST API.
func (a *Adapter) place(ctx context.Context, channel string) (place, error) {
	if p, ok := a.places.get(channel); ok {
		return p, nil
	}
	c, err := a.dg.State.Channel(channel)
	if err == nil {
		// The state updates its channels in place, under its lock.
		a.dg.State.RLock()
		copied := *c
		a.dg.State.RUnlock()
		c = &copied
	} else {
		err = withRetry(ctx, func() error {
			var err error
			c, err = a.dg.Channel(channel, discordgo.WithContext(ctx))
			return err
		})
		if err != nil {
			return place{}, fmt.Errorf("discord: look up channel %s: %w", channel, err)
		}
	}
	p := placeOf(c)
	a.places.put(channel, p)
	if p.thread {
		a.names.named(channel, c.Name)
	}
	return p, nil
}

// seenSet remembers the last n event ids, so that an event Discord sends
// again (after a resume) is handled once even where the engine cannot tell
// (a thread is created before the engine sees the message).
type seenSet struct {
	mu   sync.Mutex
	m    map[string]bool
	ring []string
	next int
}

func newSeenSet(n int) *seenSet { return &seenSet{m: map[string]bool{}, ring: make([]string, n)} }

// first records id and reports whether it is new.
func (s *seenSet) first(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[id] {
		return false
	}
	if old := s.ring[s.next]; old != "" {
		delete(s.m, old)
	}
	s.ring[s.next] = id
	s.next = (s.next + 1) % len(s.ring)
	s.m[id] = true
	return true
}

// queues run work per channel, one item at a time in arrival order, so the
// messages of a conversation reach the engine in the order they were sent
// while a slow channel does not hold up the others.
type queues struct {
	mu sync.Mutex
	m  map[string][]func()
}

func newQueues() *queues { return &queues{m: map[string][]func(){}} }

// push queues f for ch, starting the channel's worker if it is idle.
func (q *queues) push(ch string, f func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pending, busy := q.m[ch]
	q.m[ch] = append(pending, f)
	if !busy {
		go q.drain(ch)
	}
}

func (q *queues) drain(ch string) {
	for {
		q.mu.Lock()
		pending := q.m[ch]
		if len(pending) == 0 {
			delete(q.m, ch)
			q.mu.Unlock()
			return
		}
		f := pending[0]
		q.m[ch] = pending[1:]
		q.mu.Unlock()
		f()
	}
}
