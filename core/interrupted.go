package core

import (
	"context"
	"fmt"
	"strings"
)

// AuditOutcomeUnknown records an approved tool call whose process died
// while it ran (or was about to): it may or may not have taken effect, and
// it is never run again on its own.
const AuditOutcomeUnknown = "outcome_unknown"

// RetryNote is what a conversation is told when a run interrupted by its
// process's death is taken up again elsewhere.
const RetryNote = "🔁 The opsgate instance that was answering stopped; I am picking this up again."

// recoverInterrupted takes up the runs that are still marked running but
// that nobody runs: their process died (docs/design.md §12). For each, it claims
// the conversation (with replicas, only one engine gets it) and queues a
// run that continues the conversation as it stands.
func (e *Engine) recoverInterrupted(ctx context.Context) int {
	// Runs that ended here but whose end the store refused are not
	// interrupted: store their end, never run them again.
	e.recordEnds(ctx)
	runs, err := e.store.UnfinishedRuns(ctx)
	if err != nil {
		e.log.Error("read unfinished runs", "err", err)
		return 0
	}
	n := 0
	for _, r := range runs {
		e.mu.Lock()
		s := e.sessions[r.ConvKey]
		mine := s != nil && s.active != nil && s.active.id == r.ID
		queued := s != nil && s.interrupted[r.ID]
		_, ended := e.unrecorded[r.ID]
		e.mu.Unlock()
		if mine || queued || ended {
			continue
		}
		// Paused at approvals (its process died after storing the
		// requests, before the run's status said so): nothing of it was
		// running, so it is resumed when they are decided (resumeDecided),
		// never taken up as interrupted, which would call its approved
		// calls' outcome unknown.
		if _, err := e.store.Checkpoint(ctx, r.ID); err == nil {
			continue
		}
		// Held by a live engine: the run is going there.
		held, done, err := e.claimFor(ctx, r.ConvKey)
		if err != nil || !held {
			done()
			continue
		}
		e.mu.Lock()
		s = e.sessionLocked(r.ConvKey)
		taken := s.active != nil && s.active.id == r.ID || s.interrupted[r.ID]
		e.mu.Unlock()
		// Read again: the list may be older than the run's end.
		if cur, err := e.store.Run(ctx, r.ID); taken || err != nil || cur.Status != RunRunning {
			done()
			continue
		}
		// A message is retried once (docs/design.md §16): a run that was itself
		// the retry ends with an error, said in the conversation, and is
		// not run a third time.
		if e.wasRetry(ctx, r) {
			e.abandon(ctx, s, r)
			done()
			continue
		}
		e.mu.Lock()
		if s.interrupted[r.ID] {
			e.mu.Unlock()
			done()
			continue
		}
		if s.interrupted == nil {
			s.interrupted = map[string]bool{}
		}
		s.interrupted[r.ID] = true
		j := job{kind: jobContinue, interrupted: r}
		if s.active == nil {
			e.startLocked(s, j)
		} else {
			s.queue = append([]job{j}, s.queue...)
		}
		e.mu.Unlock()
		done()
		e.log.Warn("taking up a run whose process stopped", "conv", r.ConvKey, "run", r.ID)
		n++
	}
	return n
}

// RetryAbandoned is what a conversation is told when the run that retried
// an interrupted one was interrupted too.
const RetryAbandoned = "⚠️ The opsgate instance answering this stopped again while retrying it; it is not retried a second time. Please ask again."

// wasRetry reports whether r took up an interrupted run: its events carry
// the retry note.
func (e *Engine) wasRetry(ctx context.Context, r Run) bool {
	evs, err := e.store.Events(ctx, EventQuery{ConvKey: r.ConvKey, RunID: r.ID})
	if err != nil {
		return false
	}
	for _, ev := range evs {
		if ev.Type == EventWorkflowError && ev.Text == RetryNote {
			return true
		}
	}
	return false
}

// abandon ends the interrupted retry r with an error and says so; nothing
// of it runs again.
func (e *Engine) abandon(ctx context.Context, s *session, r Run) {
	r.Status, r.EndedAt = RunError, e.now()
	r.Error = "interrupted: the opsgate instance running this retry stopped; not retried again"
	if err := e.store.Apply(ctx, Batch{ConvKey: r.ConvKey, UpdateRun: &r}); err != nil {
		e.log.Error("end an interrupted retry", "run", r.ID, "err", err)
		return
	}
	e.log.Warn("an interrupted retry ends with an error; not retried again", "conv", r.ConvKey, "run", r.ID)
	s.out.emit(r.ID, Event{Type: EventWorkflowError, Text: RetryAbandoned, Error: RetryAbandoned})
	s.out.emit(r.ID, Event{Type: EventCompleted, Status: RunError, Text: RetryAbandoned})
}

// continueRun starts a run over the conversation as it stands, in place of
// the interrupted run old: old ends as an error, approved calls of old that
// never reported back are audited as outcome unknown and told to the
// model and the people, and nothing of old runs again.
func (e *Engine) continueRun(ctx context.Context, s *session, a *activeRun, old Run) (*runState, error) {
	conv, msgs, err := e.conversationSoFar(ctx, s.key)
	if err != nil {
		return nil, err
	}
	unknown, err := e.unreported(ctx, old.ID)
	if err != nil {
		return nil, err
	}
	run := Run{ID: newID(), ConvKey: s.key, Requester: old.Requester, Status: RunRunning, StartedAt: e.now()}
	e.mu.Lock()
	a.id = run.ID
	e.mu.Unlock()
	rs := &runState{run: run, act: a, out: s.out, toolsets: conv.Toolsets, msgs: msgs, started: e.now()}
	old.Status, old.EndedAt = RunError, e.now()
	old.Error = "interrupted: the opsgate instance running it stopped; run " + run.ID + " took it up"
	start := Batch{CreateRun: &run, UpdateRun: &old}
	var said []string
	for _, ap := range unknown {
		what := fmt.Sprintf("%s on %s %s", ap.Tool, ap.Toolset, string(ap.Arguments))
		start.Audit = append(start.Audit, AuditEntry{
			Time: e.now(), Kind: AuditOutcomeUnknown, ConvKey: ap.ConvKey, RunID: old.ID, ApprovalID: ap.ID,
			Toolset: ap.Toolset, Tool: ap.Tool, ActionHash: ap.ActionHash, Risk: ap.Risk,
			Detail: "the instance running it stopped before it reported back; not run again",
		})
		said = append(said, what)
	}
	if len(said) > 0 {
		// The model hears it from itself, before it plans again.
		e.stage(rs, Message{Role: RoleAssistant, Content: "(Note: I was running " + strings.Join(said, "; ") +
			" when the opsgate instance running me stopped. Its outcome is unknown: it may or may not have taken effect. " +
			"It was not run again; it must be checked before anything is retried.)"})
	}
	if err := e.commit(ctx, rs, start); err != nil {
		return nil, err
	}
	s.out.emit(run.ID, Event{Type: EventReady})
	s.out.emit(run.ID, Event{Type: EventWorkflowError, Text: RetryNote, Error: RetryNote})
	for _, w := range said {
		msg := "⚠️ " + w + " was running when the opsgate instance running it stopped: its outcome is unknown. It was not run again; check it before retrying."
		s.out.emit(run.ID, Event{Type: EventWorkflowError, Text: msg, Error: msg})
	}
	return rs, nil
}

// unreported returns the approved calls of a run that have no executed or
// failed audit entry: they were running, or about to, when it stopped.
func (e *Engine) unreported(ctx context.Context, runID string) ([]Approval, error) {
	as, err := e.store.Approvals(ctx, runID)
	if err != nil {
		return nil, err
	}
	var out []Approval
	for _, ap := range as {
		if ap.Status != ApprovalApproved {
			continue
		}
		entries, err := e.store.Audit(ctx, AuditFilter{ApprovalID: ap.ID})
		if err != nil {
			return nil, err
		}
		reported := false
		for _, en := range entries {
			switch en.Kind {
			case AuditExecuted, AuditFailed, AuditMismatch, AuditOutcomeUnknown:
				reported = true
			}
		}
		if !reported {
			out = append(out, ap)
		}
	}
	return out, nil
}
