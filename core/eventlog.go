package core

import (
	"context"
	"sync"
	"time"
)

// eventLog keeps the emitted events in the store, in batches, behind the
// runs: a slow or failing store delays neither a run nor a subscriber. It
// is what lets a stream that reconnects get exactly what it missed
// ([Engine.Events]).
type eventLog struct {
	e *Engine

	mu    sync.Mutex
	queue []Event
	// added counts the events queued so far, kept those written (or given
	// up on); progress is closed and replaced whenever kept grows.
	added, kept uint64
	progress    chan struct{}
	writing     bool
}

func newEventLog(e *Engine) *eventLog {
	return &eventLog{e: e, progress: make(chan struct{})}
}

// eventBatch is the most events written in one store call.
const eventBatch = 256

// add queues ev to be kept. Outboxes call it in Seq order.
func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = append(l.queue, ev)
	l.added++
	if !l.writing {
		l.writing = true
		// Counted, like a subscriber's lane, so that Engine.Wait (and so
		// Shutdown) waits for the events to be kept.
		l.e.busy.add(1)
		go l.write()
	}
}

// write drains the queue, a batch per store call, and ends when it is empty.
func (l *eventLog) write() {
	defer l.e.busy.add(-1)
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.queue = nil
			l.writing = false
			l.mu.Unlock()
			return
		}
		n := min(len(l.queue), eventBatch)
		batch := make([]Event, n)
		copy(batch, l.queue)
		clear(l.queue[:n])
		l.queue = l.queue[n:]
		l.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := l.e.store.AppendEvents(ctx, batch)
		cancel()
		l.mu.Lock()
		if err != nil {
			// The events were delivered live; only a stream that
			// reconnects later misses them. What waits behind them is
			// dropped too: a store that is down would otherwise hold
			// every later event (and Shutdown) behind a timeout each.
			dropped := len(l.queue)
			clear(l.queue)
			l.queue = l.queue[:0]
			n += dropped
			l.e.log.Error("keep events; a stream reconnecting will miss them", "events", n, "conv", batch[0].ConvKey, "err", err)
		}
		l.kept += uint64(n)
		close(l.progress)
		l.progress = make(chan struct{})
		l.mu.Unlock()
	}
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
