package core

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// runState is what one run carries through the graph.
type runState struct {
	run       Run
	act       *activeRun
	out       *outbox
	toolsets  []Toolset
	msgs      []Message // the transcript, as stored
	resumed   bool
	batch     []PendingCall // the tool calls the gate works on
	offered   map[string]Tool
	withheld  map[string]Tool // write tools of toolsets loaded read-only
	memoryMsg string          // memory_prepare's additional system message for this turn
	memLoaded bool
	memAhead  *memoryFetch    // the turn's memory, retrieved while the run's start was written
	starting  *runStart       // the run's start, while it is being written (newRun)
	reported  map[string]bool // unavailable toolsets already told to the user
	started   time.Time
	staged    staged // writes waiting for the run's next commit (commit.go)

	status    RunStatus
	finalText string
}

// node is a step of the run graph (docs/design.md §2).
type node int

const (
	nodeEntry node = iota
	nodeMemory
	nodeModel
	nodeGate
	nodeFinal
	nodeEnd
)

// execute prepares the run for j and walks the graph to its end.
func (e *Engine) execute(s *session, a *activeRun, j job) {
	// Store writes use a context that a stop does not cancel: a stopped run
	// must still record how it ended.
	bg := context.WithoutCancel(a.ctx)
	var rs *runState
	var err error
	switch j.kind {
	case jobNew:
		rs, err = e.newRun(bg, s, a, j.in)
	case jobResume:
		rs, err = e.resumeRun(bg, s, a, j.cp)
	case jobContinue:
		rs, err = e.continueRun(bg, s, a, j.interrupted)
	}
	if err != nil {
		e.log.Error("run could not start", "conv", s.key, "err", err)
		runID := a.id
		if runID == "" {
			runID = j.in.RunID
		}
		if runID == "" {
			runID = newID()
		}
		e.couldNotStart(s.out, runID, err)
		return
	}
	n := nodeEntry
	for n != nodeEnd {
		// Only the model's first request goes ahead of the run's start
		// being in the store: no tool runs (gate) and nothing is recorded
		// (final) before it is. Every run ends through final.
		if (n == nodeGate || n == nodeFinal) && e.startFailed(rs) {
			return
		}
		switch n {
		case nodeEntry:
			n = e.entry(a.ctx, rs)
		case nodeMemory:
			n = e.memoryPrepare(a.ctx, rs)
		case nodeModel:
			n = e.modelStep(a.ctx, rs)
		case nodeGate:
			n = e.gate(a.ctx, rs)
		case nodeFinal:
			e.final(bg, rs)
			n = nodeEnd
		}
	}
}

// conversationSoFar reads what a new run starts from: the conversation and
// its transcript.
func (e *Engine) conversationSoFar(ctx context.Context, key string) (Conversation, []Message, error) {
	conv, err := e.store.Conversation(ctx, key)
	if err != nil {
		return conv, nil, err
	}
	msgs, err := e.store.Messages(ctx, key)
	return conv, msgs, err
}

func (e *Engine) newRun(ctx context.Context, s *session, a *activeRun, in Inbound) (*runState, error) {
	// A new message supersedes approvals still waiting in this conversation:
	// their calls are answered "not executed" before the new message.
	e.closePaused(ctx, s.key, ApprovalOutcome{Status: ApprovalSuperseded})

	conv, msgs, err := e.conversationSoFar(ctx, s.key)
	if err != nil {
		return nil, err
	}
	fresh := len(msgs) == 0
	if fresh && len(conv.Toolsets) == 0 {
		for _, name := range e.cfg.DefaultToolsets {
			conv.Toolsets = append(conv.Toolsets, Toolset{Name: name})
		}
	}
	run := Run{ID: in.RunID, ConvKey: s.key, Requester: in.User, Status: RunRunning, StartedAt: e.now()}
	if run.ID == "" {
		run.ID = newID()
	}
	e.mu.Lock()
	a.id = run.ID
	e.mu.Unlock()
	rs := &runState{run: run, act: a, out: s.out, toolsets: conv.Toolsets, msgs: msgs, started: e.now()}
	// The run, its message, the message marked handled and a new
	// conversation's title are one commit.
	e.stage(rs, Message{Role: RoleUser, Content: in.Text, Time: in.Time})
	if e.cfg.MemoryEnabled && strings.TrimSpace(in.Text) != "" {
		rs.memAhead = e.fetchMemory(a.ctx, rs, in.Text)
	}
	// The run's first block of event numbers is reserved with it: its
	// first events need no store call of their own.
	seq := &SeqBlock{ConvKey: s.key, N: seqBlock}
	start := Batch{CreateRun: &run, InboundDone: []Inbound{in}, Seq: seq}
	first := []Event{{Type: EventReady}}
	if fresh {
		conv.Title = title(in.Text)
		start.Conversation = &conv
		first = append(first, Event{Type: EventConversationTitle, Text: conv.Title})
	}
	e.writeStart(ctx, rs, start, first)
	return rs, nil
}

// runStart is a new run's start (its first commit) being written.
type runStart struct {
	done chan struct{}
	err  error
}

// writeStart commits a new run's start while the run goes on to its
// memory and its model's first request (issue 25): the request then does
// not wait for the commit's fsync, and the commit is done by the time
// the model answers. Until it is done the run's events are held
// (outbox.hold), so nobody sees the run, its tokens included, before it
// is stored; the graph waits for it before any later step (execute). If
// the commit fails, the events are dropped and the run ends as one that
// could not start (startFailed): a crash or a store that refuses the
// write leaves the message pending, as before, and the model's answer
// unseen.
func (e *Engine) writeStart(ctx context.Context, rs *runState, b Batch, first []Event) {
	b.ConvKey = rs.run.ConvKey
	b.Messages = append(rs.staged.msgs, b.Messages...)
	b.Audit = append(rs.staged.audit, b.Audit...)
	rs.staged = staged{}
	st := &runStart{done: make(chan struct{})}
	rs.starting = st
	id, out := rs.run.ID, rs.out
	out.hold(id)
	go func() {
		defer close(st.done)
		if err := e.store.Apply(ctx, b); err != nil {
			st.err = fmt.Errorf("core: store: %w", err)
			out.drop(id)
			return
		}
		out.adopt(id, b.Seq.Last, first...)
	}()
}

// startFailed waits for the run's start to be written, if it is being,
// and reports whether it failed, in which case the run has ended: it says
// so, and nothing of it is recorded.
func (e *Engine) startFailed(rs *runState) bool {
	st := rs.starting
	if st == nil {
		return false
	}
	<-st.done
	rs.starting = nil
	if st.err == nil {
		return false
	}
	e.log.Error("run could not start", "conv", rs.run.ConvKey, "run", rs.run.ID, "err", st.err)
	rs.out.unhold(rs.run.ID)
	e.couldNotStart(rs.out, rs.run.ID, st.err)
	return true
}

// couldNotStart tells the conversation that run runID could not start.
func (e *Engine) couldNotStart(out *outbox, runID string, err error) {
	out.emit(runID, Event{Type: EventWorkflowError, Error: "opsgate could not start this run: " + err.Error(), Text: "opsgate could not start this run: " + err.Error()})
	out.emit(runID, Event{Type: EventCompleted, Status: RunError})
}

func (e *Engine) resumeRun(ctx context.Context, s *session, a *activeRun, cp Checkpoint) (*runState, error) {
	e.mu.Lock()
	a.id = cp.RunID
	e.mu.Unlock()
	run, err := e.store.Run(ctx, cp.RunID)
	if err != nil {
		return nil, err
	}
	msgs, err := e.store.Messages(ctx, cp.ConvKey)
	if err != nil {
		return nil, err
	}
	run.Status = RunRunning
	if err := e.store.Apply(ctx, Batch{UpdateRun: &run}); err != nil {
		return nil, err
	}
	return &runState{
		run: run, act: a, out: s.out, toolsets: cp.Toolsets, msgs: msgs,
		resumed: true, batch: cp.Pending, started: e.now(),
	}, nil
}

// entry routes a fresh turn to memory_prepare and a resumed one to the
// gate; a resumed turn's memory is retrieved again before its next model
// call (modelStep), since it is never stored.
func (e *Engine) entry(ctx context.Context, rs *runState) node {
	if len(rs.batch) > 0 {
		// The gate answers a stopped resume with "not executed" results, so
		// the transcript stays whole.
		return nodeGate
	}
	if ctx.Err() != nil {
		rs.status = RunStopped
		return nodeFinal
	}
	return nodeMemory
}

// memoryPrepare retrieves this turn's long-term memory (docs/design.md §14): it
// is injected as an extra system message into every model call of the
// turn and into none after it; it is never stored. A failure is logged
// and the run goes on without memory: nothing is said to the user. A new
// run's retrieval started with it (fetchMemory) and is only waited for.
func (e *Engine) memoryPrepare(ctx context.Context, rs *runState) node {
	if !e.cfg.MemoryEnabled || rs.memLoaded {
		return nodeModel
	}
	rs.memLoaded = true
	rs.memoryMsg = ""
	query := ""
	for i := len(rs.msgs) - 1; i >= 0; i-- {
		if rs.msgs[i].Role == RoleUser {
			query = rs.msgs[i].Content
			break
		}
	}
	ahead := rs.memAhead
	rs.memAhead = nil
	if strings.TrimSpace(query) == "" {
		return nodeModel
	}
	var mc MemoryContext
	var err error
	if ahead != nil && ahead.query == query {
		select {
		case <-ahead.done:
			mc, err = ahead.mc, ahead.err
		case <-ctx.Done():
			return nodeModel // stopped: modelStep ends the run
		}
	} else {
		mc, err = e.memory.Retrieve(ctx, e.memoryQuery(rs, query))
	}
	if err != nil {
		e.log.Warn("memory retrieval failed; continuing without memory", "conv", rs.run.ConvKey, "run", rs.run.ID, "err", err)
		return nodeModel
	}
	if mc.Text == "" {
		return nodeModel
	}
	rs.memoryMsg = mc.Text
	rs.out.emit(rs.run.ID, Event{Type: EventMemoryContextLoaded, Memory: mc.Refs, Text: fmt.Sprintf("%d memory documents", len(mc.Refs))})
	return nodeModel
}

func (e *Engine) memoryQuery(rs *runState, text string) MemoryQuery {
	return MemoryQuery{
		ConvKey: rs.run.ConvKey, RunID: rs.run.ID, Requester: rs.run.Requester,
		Person: e.cfg.Policy.Person(rs.run.Requester.ID), Text: text,
		TokenBudget: e.cfg.MemoryTokenBudget, MaxDocs: e.cfg.MemoryMaxDocs,
	}
}

// memoryFetch is a retrieval under way.
type memoryFetch struct {
	query string
	done  chan struct{}
	mc    MemoryContext
	err   error
}

// fetchMemory starts retrieving the memory of a new run's message while
// the run's start is written (issue 25): the model's request then waits
// for the longer of the two, not for both in turn. It ends with ctx (the
// run's).
func (e *Engine) fetchMemory(ctx context.Context, rs *runState, query string) *memoryFetch {
	f := &memoryFetch{query: query, done: make(chan struct{})}
	q := e.memoryQuery(rs, query)
	go func() {
		defer close(f.done)
		f.mc, f.err = e.memory.Retrieve(ctx, q)
	}()
	return f
}

// final records how the run ended and emits completed.
func (e *Engine) final(ctx context.Context, rs *runState) {
	if rs.status == "" {
		rs.status = RunDone
	}
	rs.run.Status = rs.status
	rs.run.Duration += e.now().Sub(rs.started)
	if rs.status != RunAwaitingApproval {
		rs.run.EndedAt = e.now()
	}
	// The run's end goes with the last of its messages; should the run's
	// record fail, the messages are still tried on their own.
	if err := e.commit(ctx, rs, Batch{UpdateRun: &rs.run}); err != nil {
		e.log.Error("record run end", "run", rs.run.ID, "err", err)
		e.flush(ctx, rs)
		if rs.status != RunAwaitingApproval {
			e.keepUnrecorded(rs)
		}
	}
	usage := rs.run.Usage
	rs.out.emit(rs.run.ID, Event{Type: EventCompleted, Status: rs.status, Text: rs.finalText, Usage: &usage, Duration: rs.run.Duration})
	if rs.status != RunAwaitingApproval {
		e.maybeTitle(ctx, rs)
	}
	e.countRun(rs.status)
}

// title is a conversation title made from its first message, without a
// model call: the first line, cut at 60 characters.
func title(text string) string {
	t := strings.TrimSpace(text)
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i]
	}
	if utf8.RuneCountInString(t) > 60 {
		r := []rune(t)
		t = strings.TrimSpace(string(r[:59])) + "…"
	}
	return t
}
