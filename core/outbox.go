package core

import (
	"context"
	"sync"
	"time"
)

// outbox delivers one conversation's events to the sender in order, from its
// own goroutine, so that a slow or failing sender never blocks a run. The
// queue is unbounded: the run must not wait, and renderers coalesce tokens.
type outbox struct {
	e       *Engine
	convKey string

	mu      sync.Mutex
	queue   []Event
	running bool
	seqs    map[string]*seqs // sequence numbers per run id
}

func newOutbox(e *Engine, convKey string) *outbox {
	return &outbox{e: e, convKey: convKey, seqs: map[string]*seqs{}}
}

// seqBlock is how many sequence numbers an outbox reserves from the store
// at a time: one store write per block, not per token.
const seqBlock = 32

// seqs is the block of sequence numbers this outbox holds for a run:
// next is the last one used, last the last one reserved.
type seqs struct{ next, last int64 }

// lastSeq returns the last sequence number given to the run here.
func (o *outbox) lastSeq(runID string) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if b := o.seqs[runID]; b != nil {
		return b.next
	}
	return 0
}

// idle reports whether every event was delivered and no run numbers
// events here.
func (o *outbox) idle() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.running && len(o.queue) == 0
}

// forget drops the run's numbering state once it has ended.
func (o *outbox) forget(runID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.seqs, runID)
}

// nextSeq returns the run's next sequence number, reserving a block from
// the store when this outbox has none left. Numbers come from the store so
// that every process emitting events of a run (the one running it, one
// deciding an approval, one resuming it) hands out different, increasing
// ones. o.mu must be held.
func (o *outbox) nextSeq(runID string) int64 {
	b := o.seqs[runID]
	if b == nil {
		b = &seqs{}
		o.seqs[runID] = b
	}
	if b.next >= b.last {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		last, err := o.e.store.ReserveSeq(ctx, runID, seqBlock)
		cancel()
		if err != nil {
			// Numbers stay unique in this process; the run goes on.
			o.e.log.Error("reserve event sequence numbers", "run", runID, "err", err)
			last = b.last + seqBlock
		}
		b.next, b.last = last-seqBlock, last
	}
	b.next++
	return b.next
}

// emit stamps ev and queues it. It never blocks on the sender.
func (o *outbox) emit(runID string, ev Event) {
	o.mu.Lock()
	ev.ConvKey = o.convKey
	ev.RunID = runID
	ev.Seq = o.nextSeq(runID)
	ev.Time = o.e.now()
	o.queue = append(o.queue, ev)
	start := !o.running
	o.running = true
	o.mu.Unlock()
	if start {
		o.e.busy.add(1)
		go o.flush()
	}
}

func (o *outbox) flush() {
	defer o.e.busy.add(-1)
	for {
		o.mu.Lock()
		if len(o.queue) == 0 {
			o.running = false
			o.queue = nil
			o.mu.Unlock()
			return
		}
		ev := o.queue[0]
		o.queue[0] = Event{}
		o.queue = o.queue[1:]
		o.mu.Unlock()
		o.deliver(ev)
	}
}

// sendTimeout bounds one delivery so that a hung platform call cannot stall a
// conversation's events forever.
const sendTimeout = 2 * time.Minute

func (o *outbox) deliver(ev Event) {
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			o.e.sendErrors.Add(1)
			o.e.log.Error("event sender panicked", "conv", ev.ConvKey, "event", ev.Type, "panic", r)
		}
	}()
	if err := o.e.sender.Send(ctx, ev); err != nil {
		o.e.sendErrors.Add(1)
		o.e.log.Warn("event delivery failed", "conv", ev.ConvKey, "event", ev.Type, "err", err)
	}
}

// busyCounter tracks running runs and flushing outboxes for Engine.Wait.
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
