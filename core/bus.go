package core

import (
	"context"
	"sync"
	"time"
)

// SubscribeOptions say which conversations a subscription hears and how
// much it may hold. The zero value is every event of the subscribed
// conversation(s), unbounded.
type SubscribeOptions struct {
	// Owns, when set, narrows the subscription to the conversations it
	// reports true for (a chat adapter's ownership test). It is called on
	// the goroutine that emits the event, once per event: it must be fast
	// and must not call the engine.
	Owns func(convKey string) bool
	// Buffer bounds the events waiting for this subscriber, per
	// conversation; 0 means unbounded. An event that finds the buffer full
	// is dropped for this subscriber only, logged and counted as a send
	// error; its Seq leaves a gap a replaying subscriber can detect.
	Buffer int
}

// Subscribe delivers the events of conversation convKey ("" means every
// conversation) to s until cancel is called, and returns cancel.
//
// Every subscriber has a queue and a goroutine of its own per conversation:
// it receives that conversation's events in order, with the Seq every other
// subscriber sees for the same event, and a subscriber that is slow, fails
// or panics never delays the others or the run (docs/design.md §5). Its errors and
// panics are logged and counted ([Engine.SendErrors]). One Send is bounded
// by a timeout; its ctx says when.
//
// cancel may be called more than once and from Send itself; once it
// returns, no new Send starts for s and events still queued for s are
// dropped (one already in progress finishes). Subscribing sees only the
// events emitted after it: a subscriber that must catch up (a stream
// reconnecting with Last-Event-ID) subscribes first, then reads what it
// missed from the store and skips the live events whose Seq it has already
// shown.
//
// [Deps.Sender], when set, is subscribed for every conversation when the
// engine is built.
func (e *Engine) Subscribe(convKey string, s EventSender, opts SubscribeOptions) (cancel func()) {
	return e.bus.subscribe(convKey, s, opts)
}

// bus fans each event out to the subscriptions of its conversation and to
// those of every conversation.
type bus struct {
	e *Engine

	mu     sync.RWMutex
	nextID uint64
	// subs are the subscriptions by conversation key ("": every one).
	subs map[string]map[uint64]*subscription
}

func newBus(e *Engine) *bus {
	return &bus{e: e, subs: map[string]map[uint64]*subscription{}}
}

func (b *bus) subscribe(convKey string, s EventSender, opts SubscribeOptions) func() {
	b.mu.Lock()
	b.nextID++
	sub := &subscription{b: b, id: b.nextID, conv: convKey, s: s, opts: opts, lanes: map[string]*lane{}}
	if b.subs[convKey] == nil {
		b.subs[convKey] = map[uint64]*subscription{}
	}
	b.subs[convKey][sub.id] = sub
	b.mu.Unlock()
	var once sync.Once
	return func() { once.Do(sub.cancel) }
}

// publish queues ev for every subscription that hears its conversation.
// Callers publish a conversation's events in Seq order (the outbox does,
// under its lock); each subscription keeps that order.
func (b *bus) publish(ev Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, sub := range b.subs[ev.ConvKey] {
		sub.enqueue(ev)
	}
	if ev.ConvKey == "" {
		return
	}
	for _, sub := range b.subs[""] {
		sub.enqueue(ev)
	}
}

// subscription is one subscriber with a lane per conversation that has
// events waiting: a queue and, while it is not empty, a goroutine.
type subscription struct {
	b    *bus
	id   uint64
	conv string
	s    EventSender
	opts SubscribeOptions

	mu        sync.Mutex
	cancelled bool
	lanes     map[string]*lane
}

type lane struct {
	queue []Event
}

func (sub *subscription) enqueue(ev Event) {
	if sub.opts.Owns != nil && !sub.opts.Owns(ev.ConvKey) {
		return
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.cancelled {
		return
	}
	l := sub.lanes[ev.ConvKey]
	if l == nil {
		l = &lane{}
		sub.lanes[ev.ConvKey] = l
		// Counted before the lock is released, so Engine.Wait never sees
		// an event that is queued but not yet busy.
		sub.b.e.busy.add(1)
		go sub.flush(ev.ConvKey, l)
	}
	if n := sub.opts.Buffer; n > 0 && len(l.queue) >= n {
		sub.b.e.sendErrors.Add(1)
		sub.b.e.log.Warn("event dropped: subscriber's buffer is full", "conv", ev.ConvKey, "event", ev.Type, "seq", ev.Seq, "subscriber", sub.id)
		return
	}
	l.queue = append(l.queue, ev)
}

// flush delivers l's events in order and ends, removing l, when it is
// empty or the subscription is cancelled. One flush runs per lane.
func (sub *subscription) flush(convKey string, l *lane) {
	defer sub.b.e.busy.add(-1)
	for {
		sub.mu.Lock()
		if sub.cancelled || len(l.queue) == 0 {
			l.queue = nil
			delete(sub.lanes, convKey)
			sub.mu.Unlock()
			return
		}
		ev := l.queue[0]
		l.queue[0] = Event{}
		l.queue = l.queue[1:]
		sub.mu.Unlock()
		sub.deliver(ev)
	}
}

// sendTimeout bounds one delivery so that a hung platform call cannot stall a
// conversation's events forever.
const sendTimeout = 2 * time.Minute

func (sub *subscription) deliver(ev Event) {
	e := sub.b.e
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			e.sendErrors.Add(1)
			e.log.Error("event sender panicked", "conv", ev.ConvKey, "event", ev.Type, "subscriber", sub.id, "panic", r)
		}
	}()
	if err := sub.s.Send(ctx, ev); err != nil {
		e.sendErrors.Add(1)
		e.log.Warn("event delivery failed", "conv", ev.ConvKey, "event", ev.Type, "subscriber", sub.id, "err", err)
	}
}

// cancel removes the subscription; its lanes end at their next event.
func (sub *subscription) cancel() {
	b := sub.b
	b.mu.Lock()
	delete(b.subs[sub.conv], sub.id)
	if len(b.subs[sub.conv]) == 0 {
		delete(b.subs, sub.conv)
	}
	b.mu.Unlock()
	sub.mu.Lock()
	sub.cancelled = true
	for _, l := range sub.lanes {
		l.queue = nil
	}
	sub.mu.Unlock()
}
