package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// eventLog keeps the emitted events in the store, in batches, behind the
// runs: a slow or failing store delays neither a run nor a subscriber. It
// is what lets a stream that reconnects get exactly what it missed
// ([Engine.Events]).
//
// While the store cannot take them (docs/design.md §16: streams are whole), the
// events wait here, in order, and the batch that failed is tried again
// until the store is back; at most [Config.EventBuffer] wait. Past that
// bound the oldest are dropped (they were delivered live; only a stream
// reading the store misses them), and in their place the log keeps a gap
// event (EventGap) per conversation and run, numbered as the last event it
// stands for, that a replaying stream shows as `event: gap`: nothing is
// ever missing silently.
type eventLog struct {
	e     *Engine
	limit int // the most events waiting (Config.EventBuffer)

	mu sync.Mutex
	// queue are the events waiting, in the order added (each
	// conversation's in Seq order); batch is the one being written, taken
	// from the front of queue, with the gaps that preceded it.
	queue []Event
	batch []Event
	// batchN is how many added events batch stands for.
	batchN uint64
	// gaps are the gap events of dropped events not yet in a batch, in
	// order; open indexes the last of a conversation's while it may grow.
	gaps []gapEvent
	open map[string]int
	// added counts the events queued so far, kept those written (or given
	// up on, their gap written); progress is closed and replaced whenever
	// kept grows.
	added, kept uint64
	progress    chan struct{}
	writing     bool
	// failing is set while the store refuses writes; wake interrupts the
	// pause between attempts (close).
	failing bool
	wake    chan struct{}
	// closed: Shutdown gave up on what still waits.
	closed bool
	// hurry cuts the writer's linger short: a reader of the store
	// (flushed) waits for what is queued, or a batch is full.
	hurry chan struct{}
}

// gapEvent is a gap event and how many dropped events it stands for.
type gapEvent struct {
	ev Event
	n  uint64
}

func newEventLog(e *Engine, limit int) *eventLog {
	return &eventLog{e: e, limit: limit, progress: make(chan struct{}), open: map[string]int{}, wake: make(chan struct{}),
		hurry: make(chan struct{}, 1)}
}

// eventLinger is how long the writer lets events gather before it writes
// them: a generation's tokens come every few milliseconds, and a store
// write per token (a transaction and, with SQLite, an fsync each) cost
// more CPU than the rest of the run and competed with the run's own
// writes for the store. Nothing waits on it: a stream replaying from the
// store (Engine.Events) and Shutdown hurry the writer (flushed).
const eventLinger = 100 * time.Millisecond

// kick cuts the writer's current or next linger short.
func (l *eventLog) kick() {
	select {
	case l.hurry <- struct{}{}:
	default:
	}
}

// linger waits, without l.mu, until events have gathered for
// eventLinger, a batch is full, someone waits for them (kick) or the log
// is closed.
func (l *eventLog) linger() {
	t := time.NewTimer(eventLinger)
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.hurry:
	case <-l.wake:
	}
}

// eventBatch is the most events written in one store call.
const eventBatch = 256

// Retrying a failed write: the first pause, doubled up to the last.
const (
	eventRetryFirst = 100 * time.Millisecond
	eventRetryMax   = 2 * time.Second
)

// add queues ev to be kept. Outboxes call it in Seq order.
func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = append(l.queue, ev)
	l.added++
	if len(l.queue) > l.limit && len(l.gaps) == 0 {
		// Said once per overflow: the gaps are written with the next batch.
		l.e.log.Error("keep events: too many wait for the store; the oldest are dropped, and a stream replaying them is told (event: gap)", "limit", l.limit)
	}
	for len(l.queue) > l.limit {
		l.drop(l.queue[0])
		l.queue[0] = Event{}
		l.queue = l.queue[1:]
	}
	if len(l.queue) == eventBatch {
		l.kick()
	}
	if !l.writing {
		l.writing = true
		go l.write()
	}
}

// drop gives up on ev, the oldest event waiting, and names it in its
// conversation's gap. The events of a conversation after it all wait
// behind it, those before it were written or are in the batch: one gap
// event, numbered as the last dropped event, covers a run of them until a
// batch takes it. l.mu must be held.
func (l *eventLog) drop(ev Event) {
	if i, ok := l.open[ev.ConvKey]; ok && l.gaps[i].ev.RunID == ev.RunID {
		g := &l.gaps[i]
		g.ev.Seq, g.ev.Time, g.ev.Gap.To = ev.Seq, ev.Time, ev.Seq
		g.n++
		return
	}
	l.open[ev.ConvKey] = len(l.gaps)
	l.gaps = append(l.gaps, gapEvent{n: 1, ev: Event{
		Type: EventGap, ConvKey: ev.ConvKey, RunID: ev.RunID, Seq: ev.Seq, Time: ev.Time,
		Gap: &Gap{From: ev.Seq, To: ev.Seq},
	}})
}

// write drains the queue, a batch per store call, each after events
// gathered for eventLinger, and ends when it is empty. A batch the store
// refuses is tried again, with pauses, until it is written or the log is
// closed.
func (l *eventLog) write() {
	pause := eventRetryFirst
	for {
		l.mu.Lock()
		gather := l.batch == nil && !l.closed && len(l.queue) < eventBatch
		l.mu.Unlock()
		if gather {
			l.linger()
		}
		l.mu.Lock()
		if l.closed {
			l.abandon()
			l.writing = false
			l.mu.Unlock()
			return
		}
		if l.batch == nil && !l.take() {
			l.writing = false
			l.mu.Unlock()
			return
		}
		batch := l.batch
		l.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := l.e.store.AppendEvents(ctx, batch)
		cancel()
		l.mu.Lock()
		if err == nil {
			if l.failing {
				l.failing = false
				l.e.log.Info("keep events: the store takes them again", "waiting", len(l.queue))
			}
			l.kept += l.batchN
			clear(l.batch)
			l.batch, l.batchN = nil, 0
			l.signal()
			l.mu.Unlock()
			pause = eventRetryFirst
			continue
		}
		if !l.failing {
			l.failing = true
			l.e.log.Error("keep events: the store refuses them; they wait in memory and are tried again", "waiting", len(l.batch)+len(l.queue), "limit", l.limit, "err", err)
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-time.After(pause):
		case <-wake:
		}
		pause = min(2*pause, eventRetryMax)
	}
}

// take makes the next batch: the gaps waiting, then the oldest events. It
// reports false when there is nothing to write. l.mu must be held.
func (l *eventLog) take() bool {
	if len(l.queue) == 0 && len(l.gaps) == 0 {
		l.queue = nil
		return false
	}
	n := min(len(l.queue), eventBatch)
	l.batch = make([]Event, 0, len(l.gaps)+n)
	l.batchN = uint64(n)
	for _, g := range l.gaps {
		l.batch = append(l.batch, g.ev)
		l.batchN += g.n
	}
	l.gaps = nil
	clear(l.open)
	l.batch = append(l.batch, l.queue[:n]...)
	clear(l.queue[:n])
	l.queue = l.queue[n:]
	return true
}

// signal wakes those waiting for progress. l.mu must be held.
func (l *eventLog) signal() {
	close(l.progress)
	l.progress = make(chan struct{})
}

// abandon gives up on everything waiting and says what was lost: the
// events of each conversation, from–to. l.mu must be held.
func (l *eventLog) abandon() {
	lost := map[string]*Gap{}
	var order []string
	var n uint64
	note := func(conv string, from, to int64, count uint64) {
		n += count
		g := lost[conv]
		if g == nil {
			lost[conv] = &Gap{From: from, To: to}
			order = append(order, conv)
			return
		}
		g.From, g.To = min(g.From, from), max(g.To, to)
	}
	for _, ev := range l.batch {
		if ev.Type == EventGap {
			note(ev.ConvKey, ev.Gap.From, ev.Gap.To, 0)
			continue
		}
		note(ev.ConvKey, ev.Seq, ev.Seq, 1)
	}
	for _, g := range l.gaps {
		note(g.ev.ConvKey, g.ev.Gap.From, g.ev.Gap.To, g.n)
	}
	for _, ev := range l.queue {
		note(ev.ConvKey, ev.Seq, ev.Seq, 1)
	}
	if len(order) > 0 {
		ranges := make([]string, len(order))
		for i, conv := range order {
			ranges[i] = fmt.Sprintf("%s %d-%d", conv, lost[conv].From, lost[conv].To)
		}
		l.e.log.Error("keep events: shutting down with events the store never took; a stream replaying them will not get them", "events", n, "lost", strings.Join(ranges, ", "))
	}
	l.kept += l.batchN + uint64(len(l.queue))
	for _, g := range l.gaps {
		l.kept += g.n
	}
	l.batch, l.batchN, l.gaps, l.queue = nil, 0, nil, nil
	clear(l.open)
	l.signal()
}

// close waits until everything queued is kept or ctx ends; then it gives
// up on what still waits (a store that stays down must not hold up
// Shutdown), logging what is lost.
func (l *eventLog) close(ctx context.Context) error {
	err := l.flushed(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return err
	}
	l.closed = true
	close(l.wake)
	if !l.writing {
		l.abandon()
	}
	// A writer still in a store call gives up when it returns.
	return err
}

// flushed waits until every event queued before the call is kept.
func (l *eventLog) flushed(ctx context.Context) error {
	l.mu.Lock()
	target := l.added
	l.mu.Unlock()
	for {
		l.mu.Lock()
		kept, progress := l.kept, l.progress
		l.mu.Unlock()
		if kept >= target {
			return nil
		}
		l.kick()
		select {
		case <-progress:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Events returns the conversation's kept events that q selects, in Seq
// order, after waiting for the events this engine emitted before the call
// to be kept. With [Engine.Subscribe] it gives a stream every event exactly
// once: subscribe first, read what was missed here, then skip the live
// events whose Seq was already read. Events are kept as people are shown
// them (after [Deps.Display]) for [Config.EventRetention].
func (e *Engine) Events(ctx context.Context, q EventQuery) ([]Event, error) {
	if err := e.events.flushed(ctx); err != nil {
		return nil, err
	}
	return e.store.Events(ctx, q)
}

// pruneEvents deletes the kept events older than the retention.
func (e *Engine) pruneEvents(ctx context.Context) {
	n, err := e.store.PruneEvents(ctx, e.now().Add(-e.cfg.EventRetention))
	if err != nil {
		e.log.Warn("prune old events", "err", err)
		return
	}
	if n > 0 {
		e.log.Debug("pruned old events", "events", n)
	}
}
