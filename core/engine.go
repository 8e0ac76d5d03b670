package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Engine runs conversations: one active run per conversation, queued and
// steering messages, stop, and the approval gate. It is safe for concurrent
// use. Several engines (processes) may share one Store; a paused run is
// resumed by whichever engine receives the deciding click.
type Engine struct {
	cfg    Config
	model  Model
	tools  ToolHost
	store  Store
	bus    *bus
	events *eventLog
	// display prepares events for people (Deps.Display); nil keeps them.
	display func(dst []Event, ev Event) []Event
	// showApproval prepares approvals for people (Deps.DisplayApproval).
	showApproval func(Approval) Approval
	memory       Retriever
	// virtual are the in-process tools by name; virtualOrder as offered.
	virtual      map[string]VirtualTool
	virtualOrder []VirtualTool
	commands     Commands
	previewer    Previewer
	log          *slog.Logger
	now          func() time.Time

	mu       sync.Mutex
	sessions map[string]*session
	// releaseMu makes a release's "is the conversation idle?" and its
	// Release one step as far as claimFor is concerned (releaseIfIdle).
	releaseMu sync.Mutex
	closed    bool

	busy       *busyCounter // active runs and subscribers' flushing lanes
	sendErrors atomic.Int64
	statsMu    sync.Mutex
	runs       map[RunStatus]int64

	// coord shares conversations with other engines (nil: one process).
	coord Coordinator
	// routed remembers the messages this engine routed (conversation and
	// message id → when), so that a message is never run twice here.
	routed map[string]time.Time
	// unrecorded are the runs that ended here whose end the store refused
	// (unrecorded.go).
	unrecorded map[string]Batch
	// previewing are the approvals whose preview this engine is working
	// out (startPreview).
	previewing map[string]bool
}

// NewEngine checks the configuration and returns an engine; it starts nothing.
func NewEngine(cfg Config, d Deps) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if d.Model == nil || d.Tools == nil || d.Store == nil {
		return nil, errors.New("core: engine needs a model, a tool host and a store")
	}
	if d.Retriever == nil {
		d.Retriever = NoMemory{}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	e := &Engine{
		cfg: cfg, model: d.Model, tools: d.Tools, store: d.Store,
		memory: d.Retriever, log: d.Logger, now: d.Now, commands: d.Commands,
		sessions:     map[string]*session{},
		busy:         newBusyCounter(),
		runs:         map[RunStatus]int64{},
		coord:        d.Coordinator,
		routed:       map[string]time.Time{},
		previewing:   map[string]bool{},
		virtual:      map[string]VirtualTool{},
		display:      d.Display,
		showApproval: d.DisplayApproval,
		previewer:    d.Previewer,
	}
	e.bus = newBus(e)
	e.events = newEventLog(e, cfg.EventBuffer)
	if d.Sender != nil {
		e.Subscribe("", d.Sender, SubscribeOptions{})
	}
	for _, vt := range append(d.Virtual, VirtualTool(loadToolsetTool{e})) {
		name := vt.Schema().Name
		if _, dup := e.virtual[name]; dup || name == "" {
			return nil, fmt.Errorf("core: virtual tool %q registered twice", name)
		}
		e.virtual[name] = vt
		e.virtualOrder = append(e.virtualOrder, vt)
	}
	return e, nil
}

// pruneFirstAfter is how long after Run starts the kept events are first
// pruned; then hourly.
const pruneFirstAfter = time.Minute

// Run sweeps expired approvals, and hourly the events older than
// Config.EventRetention, until ctx ends. Runs themselves are started by
// Handle and Decide and do not need Run; without it, expiry is still
// enforced when a late decision arrives.
func (e *Engine) Run(ctx context.Context) error {
	if e.coord != nil {
		go e.coordinate(ctx)
	}
	t := time.NewTicker(e.cfg.ExpirySweep)
	defer t.Stop()
	// The first prune waits pruneFirstAfter: at start it would compete
	// with the adapters' start and the first messages for the store (a
	// delete over every kept event), for nothing a minute cannot wait for.
	pruned := e.now().Add(pruneFirstAfter - time.Hour)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			e.ExpireApprovals(ctx)
			e.finishOrphanedPreviews(ctx)
			e.recordEnds(ctx)
			e.forgetIdle()
			if e.now().Sub(pruned) >= time.Hour {
				e.pruneEvents(ctx)
				pruned = e.now()
			}
		}
	}
}

// Wait blocks until no run is active and every event has been handed to the
// sender, or ctx ends. A run paused for approval is not active. It does not
// wait for the events to be kept ([Engine.Events] does, and Shutdown).
func (e *Engine) Wait(ctx context.Context) error { return e.busy.wait(ctx) }

// Shutdown stops accepting messages, lets active runs finish (a run that
// pauses for approval checkpoints and ends), and waits for them and their
// events until ctx ends; then it stops what is still running. It also
// waits, as long, for the events to be kept; those a store that is down
// never took are logged as lost (they were delivered live).
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	err := e.Wait(ctx)
	if err != nil {
		e.mu.Lock()
		for _, s := range e.sessions {
			if s.active != nil {
				s.active.cancel()
			}
		}
		e.mu.Unlock()
		wctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = e.Wait(wctx)
	}
	// The events still waiting for the store: until ctx ends (or for a
	// moment more, when the runs used it all), then what a store that is
	// down never took is given up on and logged.
	lctx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
	}
	_ = e.events.close(lctx)
	return err
}

// Status describes a conversation for /status.
type Status struct {
	// Busy is true while this engine has a run going for the conversation,
	// also in the moment it starts, before ActiveRun can be read.
	Busy             bool
	ActiveRun        *Run
	Queued           int
	PendingApprovals []Approval
}

// Status returns the conversation's current state, its pending approvals
// made safe to show ([Deps.DisplayApproval]).
func (e *Engine) Status(ctx context.Context, convKey string) (Status, error) {
	st, err := e.status(ctx, convKey)
	for i, a := range st.PendingApprovals {
		st.PendingApprovals[i] = e.shown(a)
	}
	return st, err
}

func (e *Engine) status(ctx context.Context, convKey string) (Status, error) {
	var st Status
	e.mu.Lock()
	var runID string
	if s := e.sessions[convKey]; s != nil {
		st.Queued = len(s.queue)
		if s.active != nil {
			st.Busy = true
			runID = s.active.id
			st.Queued += len(s.active.steer)
		}
	}
	e.mu.Unlock()
	if runID != "" {
		r, err := e.store.Run(ctx, runID)
		if err != nil {
			return st, err
		}
		st.ActiveRun = &r
	}
	cps, err := e.store.Checkpoints(ctx, convKey)
	if err != nil {
		return st, err
	}
	for _, cp := range cps {
		for _, pc := range cp.Pending {
			if pc.ApprovalID == "" {
				continue
			}
			a, err := e.store.Approval(ctx, pc.ApprovalID)
			if err != nil {
				return st, err
			}
			if a.Status == ApprovalPending {
				st.PendingApprovals = append(st.PendingApprovals, a)
			}
		}
	}
	return st, nil
}

// forgetIdle drops the sessions that had nothing to do for
// ForgetIdleAfter. Its events may still be on their way: they wait in the
// subscribers' queues, which a new session's outbox only appends to.
func (e *Engine) forgetIdle() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for key, s := range e.sessions {
		if s.active != nil || len(s.queue) > 0 || s.claiming > 0 || e.now().Sub(s.idleSince) < e.cfg.ForgetIdleAfter {
			continue
		}
		delete(e.sessions, key)
	}
}

// Metrics are counters for /metrics.
type Metrics struct {
	RunsByStatus map[RunStatus]int64 // finished runs (and pauses) by status
	ActiveRuns   int
	SendErrors   int64
	// Sessions are the conversations held in memory.
	Sessions int
}

// Metrics returns a snapshot of the engine's counters.
func (e *Engine) Metrics() Metrics {
	m := Metrics{RunsByStatus: map[RunStatus]int64{}, SendErrors: e.sendErrors.Load()}
	e.statsMu.Lock()
	for k, v := range e.runs {
		m.RunsByStatus[k] = v
	}
	e.statsMu.Unlock()
	e.mu.Lock()
	for _, s := range e.sessions {
		if s.active != nil {
			m.ActiveRuns++
		}
	}
	m.Sessions = len(e.sessions)
	e.mu.Unlock()
	return m
}

// SendErrors returns how many event deliveries failed.
func (e *Engine) SendErrors() int64 { return e.sendErrors.Load() }

func (e *Engine) countRun(st RunStatus) {
	e.statsMu.Lock()
	e.runs[st]++
	e.statsMu.Unlock()
}
