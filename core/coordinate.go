package core

import (
	"context"
	"sync"
	"time"
)

// Coordinator lets engines in several processes (replicas) share
// conversations through one store (docs/design.md §12): one active run per
// conversation across all of them. The engine that runs a conversation
// holds it; a message, a stop or a decision that reaches another engine is
// stored there and signalled to the holder. Without a Coordinator (one
// process) the engine runs whatever reaches it.
type Coordinator interface {
	// Claim makes this engine the conversation's holder unless another live
	// engine holds it (held=false). Claiming a conversation already held
	// by this engine renews it. A holder stays live while its process
	// does; a dead one's conversations are free again within the
	// implementation's lease time.
	Claim(ctx context.Context, convKey string) (held bool, err error)
	// Release gives up a conversation this engine holds.
	Release(ctx context.Context, convKey string)
	// Signal asks the conversation's holder to act; delivered is false
	// when no other live engine holds it.
	Signal(ctx context.Context, sig Signal) (delivered bool, err error)
	// Signals delivers the signals meant for this engine. After a lost
	// connection, when signals may have been missed, it delivers
	// SignalResync.
	Signals() <-chan Signal
}

// Signal is a request from one engine to the holder of a conversation.
type Signal struct {
	Kind    SignalKind `json:"k"`
	ConvKey string     `json:"c"`
	RunID   string     `json:"r,omitempty"` // SignalResume
}

// SignalKind says what a Signal asks for.
type SignalKind string

// Signal kinds.
const (
	SignalInbound SignalKind = "inbound" // messages for the conversation are stored: run them
	SignalStop    SignalKind = "stop"    // stop the conversation (as /stop)
	SignalResume  SignalKind = "resume"  // the run's approvals are decided: resume it
	SignalResync  SignalKind = "resync"  // signals may have been lost: look at the store
)

// sweepEvery is how often an engine with a Coordinator looks for stored
// messages nobody runs (their holder died, or a signal was lost).
const sweepEvery = 3 * time.Second

// routedFor is how long a routed message is remembered, so that a sweep
// reading a slightly stale list of stored messages never runs one twice.
const routedFor = 10 * time.Minute

// claimFor asks the coordinator for a conversation this engine is about
// to start work in (without one, every conversation is this engine's),
// and counts the conversation busy until done is called, which the caller
// does once the work counts as busy itself (routed, started, queued) or
// will not start. A release that found the conversation idle
// (releaseIfIdle) thus either finishes before the claim, which takes the
// conversation back or finds its new holder, or sees it busy: it can never
// land after the claim and leave work going in a conversation no engine
// holds, which another replica's sweep would then run too.
func (e *Engine) claimFor(ctx context.Context, convKey string) (held bool, done func(), err error) {
	if e.coord == nil {
		return true, func() {}, nil
	}
	e.releaseMu.Lock()
	e.mu.Lock()
	e.sessionLocked(convKey).claiming++
	e.mu.Unlock()
	e.releaseMu.Unlock()
	var once sync.Once
	done = func() {
		once.Do(func() {
			e.mu.Lock()
			if s := e.sessions[convKey]; s != nil && s.claiming > 0 {
				s.claiming--
			}
			e.mu.Unlock()
		})
	}
	held, err = e.coord.Claim(ctx, convKey)
	return held, done, err
}

// handOver signals a message stored here to the conversation's holder. When
// nobody else holds it (the holder just released it), this engine takes it
// after all.
func (e *Engine) handOver(ctx context.Context, in Inbound) {
	kind := SignalInbound
	if IsStopCommand(in.Text) {
		e.markDone(ctx, in)
		kind = SignalStop
	}
	delivered, err := e.coord.Signal(ctx, Signal{Kind: kind, ConvKey: in.ConvKey})
	e.log.Debug("message handed to the conversation's holder", "conv", in.ConvKey, "message_id", in.MessageID, "delivered", delivered)
	if err != nil {
		// The sweep finds the stored message when the store answers again.
		e.log.Error("hand a message to the conversation's holder", "conv", in.ConvKey, "err", err)
		return
	}
	if !delivered {
		e.pickUp(ctx, in.ConvKey)
	}
}

// pickUp claims the conversation and runs its stored messages that this
// engine has not routed yet.
func (e *Engine) pickUp(ctx context.Context, convKey string) {
	held, done, err := e.claimFor(ctx, convKey)
	if err != nil || !held {
		done()
		if err != nil {
			e.log.Error("claim a conversation", "conv", convKey, "err", err)
		}
		return
	}
	pending, err := e.store.PendingInbound(ctx)
	if err != nil {
		done()
		e.log.Error("read stored messages", "conv", convKey, "err", err)
		return
	}
	n := 0
	for _, in := range pending {
		if in.ConvKey == convKey && e.firstRoute(in) {
			e.log.Debug("picked up a stored message", "conv", convKey, "message_id", in.MessageID)
			e.route(ctx, in)
			n++
		}
	}
	done()
	if n == 0 {
		e.releaseIfIdle(ctx, convKey)
	}
}

// firstRoute records that this engine routes in, and reports whether it
// had not before.
func (e *Engine) firstRoute(in Inbound) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := in.ConvKey + "\x00" + in.MessageID
	if _, ok := e.routed[key]; ok {
		return false
	}
	e.routed[key] = e.now()
	return true
}

// releaseIfIdle gives the conversation up when this engine has nothing
// going or waiting in it.
func (e *Engine) releaseIfIdle(ctx context.Context, convKey string) {
	if e.coord == nil {
		return
	}
	e.releaseMu.Lock()
	defer e.releaseMu.Unlock()
	e.mu.Lock()
	s := e.sessions[convKey]
	busy := s != nil && (s.active != nil || len(s.queue) > 0 || s.claiming > 0)
	e.mu.Unlock()
	if !busy {
		e.log.Debug("conversation released", "conv", convKey)
		// Bounded: claimFor waits for it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		e.coord.Release(rctx, convKey)
	}
}

// releaseTimeout bounds a Release, which every claim of this engine waits
// for (releaseMu); a release that did not happen leaves the conversation
// held until its lease runs out, as a dead holder's would.
const releaseTimeout = 5 * time.Second

// becameIdle is called when a conversation's session has run everything
// it had: messages stored meanwhile for it (handed over while it ran) run
// now; otherwise the conversation is released for any engine to take.
func (e *Engine) becameIdle(convKey string) {
	if e.coord == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.pickUp(ctx, convKey)
}

// coordinate serves the signals and sweeps for messages nobody runs.
func (e *Engine) coordinate(ctx context.Context) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-e.coord.Signals():
			e.log.Debug("signal", "kind", sig.Kind, "conv", sig.ConvKey)
			switch sig.Kind {
			case SignalInbound:
				e.pickUp(ctx, sig.ConvKey)
			case SignalStop:
				e.stopLocal(ctx, sig.ConvKey)
			case SignalResume:
				e.maybeResume(ctx, sig.RunID)
			case SignalResync:
				e.sweep(ctx)
			}
		case <-t.C:
			e.sweep(ctx)
		}
	}
}

// sweep runs stored messages whose conversation nobody holds: their holder
// died, or their signal was lost.
func (e *Engine) sweep(ctx context.Context) {
	e.mu.Lock()
	for k, at := range e.routed {
		if e.now().Sub(at) > routedFor {
			delete(e.routed, k)
		}
	}
	e.mu.Unlock()
	// Interrupted runs first: a message stored after one runs after it.
	e.recoverInterrupted(ctx)
	e.resumeDecided(ctx)
	pending, err := e.store.PendingInbound(ctx)
	if err != nil {
		e.log.Error("sweep: read stored messages", "err", err)
		return
	}
	seen := map[string]bool{}
	for _, in := range pending {
		if seen[in.ConvKey] {
			continue
		}
		seen[in.ConvKey] = true
		e.mu.Lock()
		_, mine := e.routed[in.ConvKey+"\x00"+in.MessageID]
		e.mu.Unlock()
		if !mine {
			e.pickUp(ctx, in.ConvKey)
		}
	}
}

// resumeDecided resumes the paused runs whose approvals are all decided but
// that nobody resumed: the resume signal went to a holder that died (or
// was lost in a store outage) between the decision and the resume.
func (e *Engine) resumeDecided(ctx context.Context) {
	cps, err := e.store.Checkpoints(ctx, "")
	if err != nil {
		e.log.Error("sweep: read paused runs", "err", err)
		return
	}
	for _, cp := range cps {
		e.maybeResume(ctx, cp.RunID)
	}
}
