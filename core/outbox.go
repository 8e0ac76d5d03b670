package core

import (
	"context"
	"sync"
	"time"
)

// outbox numbers one conversation's events, prepares them for people
// ([Deps.Display]), keeps them ([EventLog]) and hands them, in order, to the
// engine's subscribers ([Engine.Subscribe]), each of which queues them
// behind its own goroutine: the run never waits for a sender, nor for the
// store to keep an event. It does wait for numbers: once per block of
// seqBlock, nextSeq asks the store (ReserveSeq) under o.mu, for at most
// seqWait, or seqWaitFailing while the store is down, when this process
// numbers the events itself.
type outbox struct {
	e       *Engine
	convKey string

	mu sync.Mutex
	// next is the last sequence number used here, last the last reserved.
	next, last int64
	// run and at are the run and time of the last event emitted here.
	run string
	at  time.Time
	// shown is emit's scratch for what the display filter returns.
	shown []Event
	// failing is set while the store refuses to reserve numbers.
	failing bool
	// heldRun's events wait in held, as emitted, while its start is being
	// written (hold): none is numbered, kept or published before the run
	// is in the store (adopt), and none at all if it never is (dropped,
	// until unhold).
	heldRun string
	held    []Event
	dropped bool
}

func newOutbox(e *Engine, convKey string) *outbox {
	return &outbox{e: e, convKey: convKey}
}

// seqBlock is how many sequence numbers an outbox reserves from the store
// at a time: one store write per block, not per token.
const seqBlock = 32

// seqFresh is the pause after which an outbox leaves what is left of its
// block and reserves anew. Another process may have emitted events of the
// conversation meanwhile (a replica deciding an approval and resuming the
// run) from a later block; numbers from this outbox's older block would
// then go backwards, and a stream replaying "after N" would skip them.
// Events of one process come in bursts far shorter than this.
const seqFresh = time.Second

// lastSeq returns the last sequence number given out here.
func (o *outbox) lastSeq() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.next
}

// nextSeq returns the conversation's next sequence number, reserving a
// block from the store when this outbox has none left, or when the event
// starts a run here or follows a pause (seqFresh). Numbers come from
// the store so that every process emitting events of a conversation (the
// one running it, one deciding an approval, one resuming it) hands out
// different, increasing ones. o.mu must be held.
func (o *outbox) nextSeq(runID string, now time.Time) int64 {
	if runID != o.run || now.Sub(o.at) > seqFresh {
		o.next = o.last // a new run, or a pause: a fresh block
	}
	o.run, o.at = runID, now
	if o.next >= o.last {
		last, err := o.reserve(seqBlock)
		if err != nil {
			// Numbers stay unique in this process; the run goes on.
			o.next, o.last = o.last, o.last+seqBlock
		} else if last-seqBlock < o.next {
			// The store was down and numbers up to o.next were used
			// without it: the block it gave may hold them. Handing them
			// out again would send a stream backwards (it skips what it
			// has seen) and the log keeps one event per number. Move the
			// store's counter past them and use only numbers above both.
			n := max(o.next-last, 0) + seqBlock
			if last, err = o.reserve(n); err != nil {
				o.last += seqBlock
			} else {
				o.next, o.last = max(o.next, last-n), last
			}
		} else {
			o.next, o.last = last-seqBlock, last
		}
	}
	o.next++
	return o.next
}

// hold makes run runID's events wait until adopt or drop: its start is
// being written while the run goes on (docs/design.md §2).
func (o *outbox) hold(runID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.heldRun, o.held, o.dropped = runID, o.held[:0], false
}

// adopt makes the block ending at last, reserved with the start of run
// runID (Batch.Seq), the one its events are numbered from, so the run's
// first event costs no store call of its own. A block that numbers
// already given out here reach (used while the store was down, or taken
// from a later block meanwhile) is left alone: nextSeq reserves anew.
// Then it emits first, and the run's events held meanwhile, in the order
// they were emitted.
func (o *outbox) adopt(runID string, last int64, first ...Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if last > 0 && last-seqBlock >= o.next {
		o.run, o.at = runID, o.e.now()
		o.next, o.last = last-seqBlock, last
	}
	for _, ev := range first {
		o.emitLocked(runID, ev)
	}
	if o.heldRun != runID {
		return
	}
	held := o.held
	o.heldRun, o.held = "", nil
	for _, ev := range held {
		ev.Time = time.Time{} // shown now, after first: times stay in order
		o.emitLocked(runID, ev)
	}
}

// drop discards run runID's held events, and those it emits until
// unhold: its start was not written, so the run never happened.
func (o *outbox) drop(runID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.heldRun == runID {
		o.held, o.dropped = nil, true
	}
}

// unhold lets run runID's events through again, after drop.
func (o *outbox) unhold(runID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.heldRun == runID {
		o.heldRun, o.held, o.dropped = "", nil, false
	}
}

// Waiting for the store to reserve numbers: at most seqWait, or
// seqWaitFailing once it failed. The run waits (o.mu is held), so a store
// that is down must not stall it that long at every block: while it is
// failing, numbers come from this process after a short try.
const (
	seqWait        = 5 * time.Second
	seqWaitFailing = 250 * time.Millisecond
)

// reserve reserves n sequence numbers from the store and returns the last.
func (o *outbox) reserve(n int64) (int64, error) {
	wait := seqWait
	if o.failing {
		wait = seqWaitFailing
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	last, err := o.e.store.ReserveSeq(ctx, o.convKey, n)
	switch {
	case err != nil && !o.failing:
		o.e.log.Error("reserve event sequence numbers: the store does not answer; this process numbers the events until it does", "conv", o.convKey, "err", err)
	case err == nil && o.failing:
		o.e.log.Info("reserve event sequence numbers: the store answers again", "conv", o.convKey)
	}
	o.failing = err != nil
	return last, err
}

// emit stamps ev, prepares it for people, queues it to be kept and
// publishes it to the engine's subscribers. It never blocks on a sender or
// the store. Doing all of it under o.mu keeps the conversation's events in
// Seq order everywhere: in the display filter (which may hold state per
// run, a redactor's stream), the event log and every subscriber.
//
// What the display filter returns is numbered, not ev: it may show nothing
// for a fragment it holds back, or release what it held first. A token or
// thinking event without text is never shown (docs/design.md §16: streams are
// whole), and takes no number.
func (o *outbox) emit(runID string, ev Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ev.Time = o.e.now()
	if runID == o.heldRun {
		if !o.dropped {
			o.held = append(o.held, ev)
		}
		return
	}
	o.emitLocked(runID, ev)
}

// emitLocked is emit of an event stamped with its time; o.mu is held.
func (o *outbox) emitLocked(runID string, ev Event) {
	if ev.Time.IsZero() {
		ev.Time = o.e.now()
	}
	ev.ConvKey = o.convKey
	ev.RunID = runID
	shown := append(o.shown[:0], ev)
	if o.e.display != nil {
		shown = o.e.display(o.shown[:0], ev)
	}
	for _, s := range shown {
		if s.Text == "" && (s.Type == EventToken || s.Type == EventThinking) {
			continue
		}
		s.ConvKey, s.RunID, s.Time = o.convKey, runID, ev.Time
		s.Seq = o.nextSeq(runID, ev.Time)
		o.e.events.add(s)
		o.e.bus.publish(s)
	}
	clear(shown)
	o.shown = shown[:0]
}

// busyCounter tracks running runs and subscribers' flushing lanes for Engine.Wait.
type busyCounter struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0
}

func newBusyCounter() *busyCounter {
	c := &busyCounter{idle: make(chan struct{})}
	close(c.idle)
	return c
}

func (c *busyCounter) add(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.n
	c.n += d
	switch {
	case was == 0 && c.n > 0:
		c.idle = make(chan struct{})
	case was > 0 && c.n == 0:
		close(c.idle)
	case c.n < 0:
		panic("core: busy counter below zero")
	}
}

func (c *busyCounter) wait(ctx context.Context) error {
	for {
		c.mu.Lock()
		idle, n := c.idle, c.n
		c.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
