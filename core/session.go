package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// session is the in-process state of one conversation: its outbox, its
// active run and what waits behind it. Guarded by Engine.mu.
type session struct {
	key    string
	out    *outbox
	active *activeRun
	queue  []job
	// interrupted are the interrupted runs already taken up here.
	interrupted map[string]bool
	// idleSince is when the session last had nothing to do.
	idleSince time.Time
	// claiming counts the work this engine is starting here between its
	// claim of the conversation and the work counting as busy (a message
	// routed, a paused run resumed, an interrupted one taken up): see
	// claimFor.
	claiming int
}

// activeRun is the handle on the run a session is executing.
type activeRun struct {
	id     string // set by the run once it exists
	ctx    context.Context
	cancel context.CancelFunc
	steer  []Inbound // messages to inject before the next model call
}

type jobKind int

const (
	jobNew      jobKind = iota // a new user turn
	jobResume                  // a paused run whose approvals are all decided
	jobContinue                // a run whose process died: continue the conversation
)

type job struct {
	kind jobKind
	in   Inbound    // jobNew
	cp   Checkpoint // jobResume: claimed checkpoint
	// interrupted is jobContinue's run that stopped with its process.
	interrupted Run
	// cancelled resumes only to close the run out (stop came first).
	cancelled bool
}

// sessionLocked returns the session for key, creating it. e.mu must be held.
func (e *Engine) sessionLocked(key string) *session {
	s := e.sessions[key]
	if s == nil {
		s = &session{key: key, out: newOutbox(e, key), idleSince: e.now()}
		e.sessions[key] = s
	}
	return s
}

func (e *Engine) outbox(key string) *outbox {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sessionLocked(key).out
}

// Handle processes an inbound user message: it is stored first (a
// redelivered MessageID is ignored), then started as a run, queued, or used
// to steer the active run according to the queue mode. "/stop" stops the
// active run instead. Handle returns once the message is durably stored and
// routed; the run proceeds in the background and reports through events.
func (e *Engine) Handle(ctx context.Context, in Inbound) error {
	if in.ConvKey == "" {
		return errors.New("core: inbound message without a conversation key")
	}
	if strings.TrimSpace(in.Text) == "" {
		return errors.New("core: empty message")
	}
	if in.Time.IsZero() {
		in.Time = e.now()
	}
	if in.MessageID == "" {
		// Every stored message needs an id to be marked done.
		in.MessageID = "local:" + newID()
	}
	// Refuse before storing: a message stored but never run would be taken
	// for a duplicate when the platform redelivers it after the restart.
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrShuttingDown
	}
	// The run limit, like shutdown, refuses before storing: a refused
	// message must never run later. Each message counts (a steering message
	// costs a model call too); /stop never does.
	if l := e.cfg.Limiter; l != nil && !IsStopCommand(in.Text) && !l.Allow(e.cfg.Policy.Person(in.User.ID), e.now()) {
		e.log.Warn("message over the run limit refused", "conv", in.ConvKey, "user", in.User.ID, "limit", l.Limit())
		return &LimitError{Limit: l.Limit()}
	}
	if e.cfg.RedactInput != nil {
		in.Text = e.cfg.RedactInput(in.Text)
	}
	first, err := e.store.SaveInbound(ctx, in)
	if err != nil {
		return fmt.Errorf("core: store inbound message: %w", err)
	}
	if !first {
		e.log.Info("duplicate inbound message ignored", "conv", in.ConvKey, "message_id", in.MessageID)
		return nil
	}
	held, done, err := e.claimFor(ctx, in.ConvKey)
	switch {
	case err != nil:
		done()
		// Stored: the sweep runs it once the conversation can be claimed.
		e.log.Error("claim the conversation of a message; it runs later", "conv", in.ConvKey, "err", err)
	case !held:
		done()
		e.handOver(ctx, in)
	case e.firstRoute(in):
		e.log.Debug("message routed here", "conv", in.ConvKey, "message_id", in.MessageID)
		e.route(ctx, in)
		done()
	default:
		done()
	}
	return nil
}

// Recover runs the stored messages that a crash or kill interrupted between
// storing and handling, for the conversations match accepts (those of the
// adapters this process serves). It returns how many it routed.
func (e *Engine) Recover(ctx context.Context, match func(convKey string) bool) (int, error) {
	pending, err := e.store.PendingInbound(ctx)
	if err != nil {
		return 0, fmt.Errorf("core: recover messages: %w", err)
	}
	n := 0
	for _, in := range pending {
		if match != nil && !match(in.ConvKey) {
			continue
		}
		held, done, err := e.claimFor(ctx, in.ConvKey)
		if err != nil || !held || !e.firstRoute(in) {
			done()
			continue // its holder runs it, or the sweep does later
		}
		e.log.Info("running a message stored before a restart", "conv", in.ConvKey, "message_id", in.MessageID)
		e.route(ctx, in)
		done()
		n++
	}
	n += e.recoverInterrupted(ctx)
	return n, nil
}

// route hands a stored message to its conversation.
func (e *Engine) route(ctx context.Context, in Inbound) {
	if IsStopCommand(in.Text) {
		e.markDone(ctx, in)
		e.Stop(ctx, in.ConvKey)
		return
	}
	if e.command(ctx, in) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.sessionLocked(in.ConvKey)
	if s.active == nil {
		e.startLocked(s, job{kind: jobNew, in: in})
		return
	}
	switch mode := e.cfg.QueueMode; {
	case mode == QueueSteer && in.RunID == "":
		s.active.steer = append(s.active.steer, in)
	case mode == QueueSteer, mode == QueueFollowup:
		// A message that names its run cannot join another one.
		s.queue = append(s.queue, job{kind: jobNew, in: in})
	case mode == QueueInterrupt:
		s.queue = append([]job{{kind: jobNew, in: in}}, s.queue...)
		s.active.cancel()
	}
}

// command answers a chat command that is not a run (/remember, /memory,
// /forget) and reports whether in was one. The answer is a run of its own
// without a model call, so every adapter shows it like an answer; the
// command never enters the transcript.
func (e *Engine) command(ctx context.Context, in Inbound) bool {
	if e.commands == nil || !strings.HasPrefix(strings.TrimSpace(in.Text), "/") {
		return false
	}
	var later func(context.Context) string
	reply, ok := e.commands.Command(ctx, CommandCall{
		ConvKey: in.ConvKey, User: in.User, Person: e.cfg.Policy.Person(in.User.ID),
		Admin: e.isAdmin(in.ConvKey, in.User.ID), Text: strings.TrimSpace(in.Text),
		Defer: func(work func(context.Context) string) { later = work },
	})
	if !ok {
		return false
	}
	e.markDone(ctx, in)
	out := e.outbox(in.ConvKey)
	id := in.RunID
	if id == "" {
		id = newID()
	}
	out.emit(id, Event{Type: EventReady})
	if later == nil {
		out.emit(id, Event{Type: EventCompleted, Status: RunDone, Text: reply})
		return true
	}
	e.busy.add(1) // Shutdown and Wait wait for it as for a run
	go func() {
		defer e.busy.add(-1)
		text := later(context.WithoutCancel(ctx))
		out.emit(id, Event{Type: EventCompleted, Status: RunDone, Text: text})
	}()
	return true
}

// markDone records that a stored message was handled; a failure only means
// the message may run again after a crash, so it is logged.
func (e *Engine) markDone(ctx context.Context, msgs ...Inbound) {
	if len(msgs) == 0 {
		return
	}
	if err := e.store.Apply(context.WithoutCancel(ctx), Batch{InboundDone: msgs}); err != nil {
		e.log.Error("mark inbound messages done", "conv", msgs[0].ConvKey, "messages", len(msgs), "err", err)
	}
}

// IsStopCommand reports whether text is the stop command.
func IsStopCommand(text string) bool {
	return strings.EqualFold(strings.TrimSpace(text), "/stop")
}

// Stop cancels the conversation's active run (it ends with status stopped
// within a second), drops queued messages and cancels pending approvals. It
// reports whether there was anything to stop. A run started after Stop
// returns is not affected.
func (e *Engine) Stop(ctx context.Context, convKey string) bool {
	return e.StopAs(ctx, convKey, Actor{}, "")
}

// StopAs is Stop on behalf of by, who is recorded with why as the one who
// cancelled the pending approvals it closes: SystemActor when opsgate ends
// a conversation itself (chat ended by SIGTERM). Stop records nobody, as
// the adapters do not pass on who typed /stop. A stop signalled to another
// replica is recorded there as by Stop.
func (e *Engine) StopAs(ctx context.Context, convKey string, by Actor, why string) bool {
	if e.stopLocalAs(ctx, convKey, ApprovalOutcome{Status: ApprovalCancelled, DecidedBy: by, Reason: why}) {
		return true
	}
	if e.coord == nil {
		return false
	}
	// The run may be going on another replica.
	delivered, err := e.coord.Signal(ctx, Signal{Kind: SignalStop, ConvKey: convKey})
	if err != nil {
		e.log.Error("signal a stop to the conversation's holder", "conv", convKey, "err", err)
	}
	return delivered
}

// stopLocal is Stop for what runs or waits in this engine.
func (e *Engine) stopLocal(ctx context.Context, convKey string) bool {
	return e.stopLocalAs(ctx, convKey, ApprovalOutcome{Status: ApprovalCancelled})
}

// stopLocalAs is stopLocal closing pending approvals with out.
func (e *Engine) stopLocalAs(ctx context.Context, convKey string, out ApprovalOutcome) bool {
	e.mu.Lock()
	did := false
	var dropped []Inbound
	if s := e.sessions[convKey]; s != nil && s.active != nil {
		did = true
		dropped = append(dropped, s.active.steer...)
		s.active.steer = nil
		s.active.cancel()
		// A resume job owns a claimed checkpoint: it must still run, to close
		// the run out, but nothing in it may execute.
		var keep []job
		for _, j := range s.queue {
			if j.kind == jobResume {
				j.cancelled = true
				keep = append(keep, j)
			} else {
				dropped = append(dropped, j.in)
			}
		}
		s.queue = keep
	}
	e.mu.Unlock()
	e.markDone(ctx, dropped...)
	n := e.closePaused(ctx, convKey, out)
	return did || n > 0
}

func (e *Engine) startLocked(s *session, j job) {
	a := newActiveRun(j)
	s.active = a
	e.busy.add(1)
	go e.drive(s, a, j)
}

func newActiveRun(j job) *activeRun {
	ctx, cancel := context.WithCancel(context.Background())
	if j.cancelled {
		cancel()
	}
	return &activeRun{ctx: ctx, cancel: cancel}
}

// drive executes j and then whatever queued up behind it, one run at a time.
func (e *Engine) drive(s *session, a *activeRun, j job) {
	defer e.busy.add(-1)
	for {
		e.execute(s, a, j)
		a.cancel()
		e.mu.Lock()
		// Steering messages that came too late for the run's last model call
		// are not lost: they start the next run.
		var late []job
		for _, in := range a.steer {
			late = append(late, job{kind: jobNew, in: in})
		}
		s.queue = append(late, s.queue...)
		if len(s.queue) == 0 {
			s.active = nil
			s.queue = nil
			s.idleSince = e.now()
			e.mu.Unlock()
			e.becameIdle(s.key)
			return
		}
		j = s.queue[0]
		s.queue = s.queue[1:]
		a = newActiveRun(j)
		s.active = a
		e.mu.Unlock()
	}
}

// takeSteer removes and returns the messages that steer run a.
func (e *Engine) takeSteer(a *activeRun) []Inbound {
	e.mu.Lock()
	defer e.mu.Unlock()
	msgs := a.steer
	a.steer = nil
	return msgs
}

func (e *Engine) hasSteer(a *activeRun) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(a.steer) > 0
}
