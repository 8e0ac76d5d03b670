package core

import (
	"context"
	"sync"
	"time"
)

// outbox numbers one conversation's events and hands them, in order, to the
// engine's subscribers ([Engine.Subscribe]), each of which queues them
// behind its own goroutine: the run never waits for a sender.
type outbox struct {
	e       *Engine
	convKey string

	mu   sync.Mutex
	seqs map[string]*seqs // sequence numbers per run id
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

// emit stamps ev and publishes it to the engine's subscribers. It never
// blocks on a sender: each subscriber has its own queue. Publishing under
// o.mu keeps every subscriber's events of the conversation in Seq order.
func (o *outbox) emit(runID string, ev Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ev.ConvKey = o.convKey
	ev.RunID = runID
	ev.Seq = o.nextSeq(runID)
	ev.Time = o.e.now()
	o.e.bus.publish(ev)
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
