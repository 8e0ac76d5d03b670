package core

import (
	"context"
	"errors"
	"fmt"
)

// Decide applies a person's decision to an approval request (docs/design.md §11):
// the vote is recorded once per person; the request is denied at the first
// denial of an eligible person and approved when the verdict's quorum of
// approvals is in. It returns the approval as it now stands (still pending,
// with the votes so far, while the quorum is not reached), or: ErrNotFound;
// a *NotAllowedError (matching ErrNotAllowed; audited) with the policy's
// sentence; ErrAlreadyVoted when this person's vote is already counted;
// ErrAlreadyDecided with the stored approval; ErrExpired (the request is
// marked expired and counts as denied); ErrHashMismatch when d.ActionHash
// is set and differs. When the last pending approval of a paused run is
// decided, the run resumes in the background, in this process. The
// approval returned is made safe to show ([Deps.DisplayApproval]).
func (e *Engine) Decide(ctx context.Context, d Decision) (Approval, error) {
	a, err := e.decideFor(ctx, d)
	return e.shown(a), err
}

func (e *Engine) decideFor(ctx context.Context, d Decision) (Approval, error) {
	a, err := e.openApproval(ctx, d.ApprovalID)
	if err != nil {
		return a, err
	}
	if el := e.mayDecide(a, d.Actor); !el.Allowed {
		e.audit(ctx, AuditEntry{Kind: AuditRefused, ConvKey: a.ConvKey, RunID: a.RunID, ApprovalID: a.ID, Actor: d.Actor,
			Toolset: a.Toolset, Tool: a.Tool, ActionHash: a.ActionHash, Risk: a.Risk, Detail: "not an allowed approver: " + el.Reason})
		return a, &NotAllowedError{Reason: el.Reason}
	}
	if d.ActionHash != "" && d.ActionHash != a.ActionHash {
		e.audit(ctx, AuditEntry{Kind: AuditMismatch, ConvKey: a.ConvKey, RunID: a.RunID, ApprovalID: a.ID, Actor: d.Actor,
			Toolset: a.Toolset, Tool: a.Tool, ActionHash: a.ActionHash, Risk: a.Risk, Detail: "decision for action hash " + d.ActionHash})
		return a, ErrHashMismatch
	}
	if !e.now().Before(a.ExpiresAt) {
		return e.decide(ctx, a, ApprovalOutcome{})
	}
	voted, err := e.store.AddVote(ctx, a.ID, Vote{Person: e.cfg.Policy.Person(d.Actor.ID), Actor: d.Actor,
		Approve: d.Approve, Reason: d.Reason, At: e.now()})
	switch {
	case errors.Is(err, ErrAlreadyVoted), errors.Is(err, ErrAlreadyDecided):
		return voted, err
	case err != nil:
		return a, fmt.Errorf("core: record vote: %w", err)
	}
	out := ApprovalOutcome{Status: ApprovalDenied, DecidedBy: d.Actor, Reason: d.Reason}
	if d.Approve {
		if voted.Approvals() < voted.Quorum() {
			// The approver's reason is kept as a deciding one is (settle).
			detail := fmt.Sprintf("approval %d of %d", voted.Approvals(), voted.Quorum())
			if d.Reason != "" {
				detail += ": " + d.Reason
			}
			e.audit(ctx, AuditEntry{Kind: AuditVote, ConvKey: a.ConvKey, RunID: a.RunID, ApprovalID: a.ID, Actor: d.Actor,
				Toolset: a.Toolset, Tool: a.Tool, ActionHash: a.ActionHash, Risk: a.Risk, Detail: detail})
			e.emitProgress(ctx, voted)
			return voted, nil
		}
		out.Status = ApprovalApproved
	}
	// Of two votes that both complete the quorum at once, one settles the
	// request; the other is told it was already decided (its vote is
	// kept with the others, but did not decide).
	return e.decide(ctx, voted, out)
}

// DenyAsSystem denies a pending approval as SystemActor, for when no person
// can answer any more (the terminal's input ended). It is the only way to
// decide as the system, and it can only deny. The audit entry has Actor
// SystemActor and Detail reason. Errors are Decide's, without
// ErrNotAllowed and ErrHashMismatch. The approval returned is made safe to
// show, as Decide's.
func (e *Engine) DenyAsSystem(ctx context.Context, approvalID, reason string) (Approval, error) {
	a, err := e.openApproval(ctx, approvalID)
	if err != nil {
		return e.shown(a), err
	}
	a, err = e.decide(ctx, a, ApprovalOutcome{Status: ApprovalDenied, DecidedBy: SystemActor, Reason: reason})
	return e.shown(a), err
}

// openApproval loads an approval that is still open: ErrNotFound (wrapped), or
// ErrAlreadyDecided with the stored approval.
func (e *Engine) openApproval(ctx context.Context, id string) (Approval, error) {
	a, err := e.store.Approval(ctx, id)
	if err != nil {
		return Approval{}, fmt.Errorf("core: approval %q: %w", id, err)
	}
	if a.Status != ApprovalPending {
		return a, ErrAlreadyDecided
	}
	return a, nil
}

// decide settles a pending approval with out, unless it has expired: then
// it is marked expired and ErrExpired returned.
func (e *Engine) decide(ctx context.Context, a Approval, out ApprovalOutcome) (Approval, error) {
	out.DecidedAt = e.now()
	var result error
	if !e.now().Before(a.ExpiresAt) {
		out = ApprovalOutcome{Status: ApprovalExpired, DecidedAt: e.now()}
		result = ErrExpired
	}
	a, err := e.settle(ctx, a, out, true)
	if err != nil {
		return a, err
	}
	return a, result
}

// mayDecide is the approver check: the policy's. Nobody may decide as
// SystemActor, whatever the policy says: an adapter that let a platform
// user with that id through would otherwise approve in the system's name.
func (e *Engine) mayDecide(a Approval, actor Actor) Eligibility {
	if actor.ID == "" || actor.ID == SystemActor.ID {
		return Eligibility{Reason: "Nobody may decide as " + SystemActor.ID + "."}
	}
	return e.cfg.Policy.MayDecide(a, actor)
}

// MayDecide tells an adapter whether who may decide a, and if not, the
// sentence to show them: the same check Decide makes.
func (e *Engine) MayDecide(a Approval, who Actor) Eligibility { return e.mayDecide(a, who) }

// Person folds an identity to its person, as the policy does for quorums.
func (e *Engine) Person(identity string) string { return e.cfg.Policy.Person(identity) }

// settle records an approval's final status, audits it, shows it, and (with
// resume) resumes the run when it was the last open request of its batch.
func (e *Engine) settle(ctx context.Context, a Approval, out ApprovalOutcome, resume bool) (Approval, error) {
	decided, err := e.store.DecideApproval(ctx, a.ID, out)
	if err != nil {
		if errors.Is(err, ErrAlreadyDecided) {
			return decided, ErrAlreadyDecided
		}
		return a, fmt.Errorf("core: decide approval: %w", err)
	}
	e.audit(ctx, AuditEntry{Kind: auditKind(decided.Status), ConvKey: decided.ConvKey, RunID: decided.RunID, ApprovalID: decided.ID,
		Actor: decided.DecidedBy, Toolset: decided.Toolset, Tool: decided.Tool, ActionHash: decided.ActionHash, Risk: decided.Risk,
		Detail: withPreviewHash(decided.Reason, decided.Preview)})
	e.emitDecision(ctx, decided)
	if d := e.decider(decided); d != nil {
		// A proposal: no run waits for it; its tool acts on the decision.
		what, err := d.Decided(ctx, decided)
		entry := AuditEntry{Kind: AuditExecuted, ConvKey: decided.ConvKey, RunID: decided.RunID, ApprovalID: decided.ID,
			Actor: decided.DecidedBy, Toolset: decided.Toolset, Tool: decided.Tool, ActionHash: decided.ActionHash, Risk: decided.Risk, Detail: what}
		if err != nil {
			entry.Kind, entry.Detail = AuditFailed, err.Error()
			e.log.Error("act on a decided proposal", "approval", decided.ID, "tool", decided.Tool, "err", err)
		}
		if decided.Status == ApprovalApproved || err != nil {
			e.audit(ctx, entry)
		}
		return decided, nil
	}
	if resume {
		e.maybeResume(ctx, decided.RunID)
	}
	return decided, nil
}

func auditKind(s ApprovalStatus) string {
	switch s {
	case ApprovalApproved:
		return AuditApproved
	case ApprovalExpired:
		return AuditExpired
	case ApprovalSuperseded:
		return AuditSuperseded
	case ApprovalCancelled:
		return AuditCancelled
	default:
		return AuditDenied
	}
}

// emitDecision shows a decision on its run's event stream at once, so a card
// updates even while other requests of the batch are still open.
func (e *Engine) emitDecision(ctx context.Context, a Approval) {
	typ := EventToolDenied
	if a.Status == ApprovalApproved {
		typ = EventToolApproved
	}
	e.emitApproval(ctx, typ, a)
}

// emitProgress shows a vote that did not reach the quorum yet: the request
// is announced again with its votes, so every card shows "1 of 2".
func (e *Engine) emitProgress(ctx context.Context, a Approval) {
	e.emitApproval(ctx, EventToolAwaitingApproval, a)
}

func (e *Engine) emitApproval(ctx context.Context, typ EventType, a Approval) {
	out := e.outbox(a.ConvKey)
	info := CallInfo{ID: a.CallID, Name: a.Tool, Toolset: a.Toolset, Arguments: a.Arguments, Risk: a.Risk, RequiresApproval: true}
	out.emit(a.RunID, Event{Type: typ, Call: &info, Approval: &a})
}

// maybeResume claims and resumes a paused run once none of its requests is
// open. Claiming is atomic in the store, so exactly one process resumes.
func (e *Engine) maybeResume(ctx context.Context, runID string) {
	cp, err := e.store.Checkpoint(ctx, runID)
	if err != nil {
		return
	}
	for _, pc := range cp.Pending {
		if pc.ApprovalID == "" {
			continue
		}
		a, err := e.store.Approval(ctx, pc.ApprovalID)
		if err != nil || a.Status == ApprovalPending {
			return
		}
	}
	// With replicas, the run resumes where its conversation is held. A
	// holder that cannot be claimed from nor signalled (it has just lost
	// its liveness) is tried again by the next sweep (resumeDecided).
	// The claim counts the conversation busy until the run has started
	// (claimFor), so the pause that just ended cannot release it in
	// between (another replica would take the run up).
	for try := 0; e.coord != nil; try++ {
		if try == 3 {
			return
		}
		held, done, err := e.claimFor(ctx, cp.ConvKey)
		if err != nil {
			done()
			e.log.Error("claim a conversation to resume its run", "run", runID, "err", err)
			return
		}
		if held {
			defer done()
			break
		}
		done()
		delivered, err := e.coord.Signal(ctx, Signal{Kind: SignalResume, ConvKey: cp.ConvKey, RunID: runID})
		if err != nil {
			e.log.Error("signal a resume to the conversation's holder", "run", runID, "err", err)
		}
		if delivered || err != nil {
			return
		}
	}
	cp, err = e.store.ClaimCheckpoint(ctx, runID)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.sessionLocked(cp.ConvKey)
	j := job{kind: jobResume, cp: cp}
	if s.active == nil {
		e.startLocked(s, j)
		return
	}
	s.queue = append([]job{j}, s.queue...)
}

// ExpireApprovals marks pending approvals past their expiry as expired and
// resumes their runs (expiry counts as a denial).
func (e *Engine) ExpireApprovals(ctx context.Context) {
	expired, err := e.store.ExpiredApprovals(ctx, e.now())
	if err != nil {
		e.log.Error("list expired approvals", "err", err)
		return
	}
	for _, a := range expired {
		if _, err := e.settle(ctx, a, ApprovalOutcome{Status: ApprovalExpired, DecidedAt: e.now()}, true); err != nil && !errors.Is(err, ErrAlreadyDecided) {
			e.log.Error("expire approval", "approval", a.ID, "err", err)
		}
	}
}

// closePaused ends the conversation's paused runs without running anything:
// out.Status is ApprovalSuperseded (a new message arrived) or
// ApprovalCancelled (/stop), with who closed them and why when known.
// Every pending call is answered "not executed" so the transcript stays
// valid, and each run completes as stopped. It returns how many runs it
// closed.
func (e *Engine) closePaused(ctx context.Context, convKey string, out ApprovalOutcome) int {
	cps, err := e.store.Checkpoints(ctx, convKey)
	if err != nil {
		e.log.Error("list checkpoints", "conv", convKey, "err", err)
		return 0
	}
	n := 0
	for _, c := range cps {
		cp, err := e.store.ClaimCheckpoint(ctx, c.RunID)
		if err != nil {
			continue // resumed or closed by someone else
		}
		n++
		e.closeOut(ctx, cp, out)
	}
	return n
}

func (e *Engine) closeOut(ctx context.Context, cp Checkpoint, closed ApprovalOutcome) {
	status := closed.Status
	out := e.outbox(cp.ConvKey)
	reason := "not executed: a new user message superseded this request"
	switch {
	case status == ApprovalCancelled && closed.Reason != "":
		reason = "not executed: cancelled: " + closed.Reason
	case status == ApprovalCancelled:
		reason = "not executed: cancelled by /stop"
	}
	run, err := e.store.Run(ctx, cp.RunID)
	loaded := err == nil
	if err != nil {
		e.log.Error("load paused run", "run", cp.RunID, "err", err)
		run = Run{ID: cp.RunID, ConvKey: cp.ConvKey}
	}
	rs := &runState{run: run, out: out}
	for _, pc := range cp.Pending {
		if pc.ApprovalID != "" {
			a, err := e.store.Approval(ctx, pc.ApprovalID)
			if err == nil {
				// The caller owns the claimed checkpoint: nothing to resume.
				_, _ = e.settle(ctx, a, ApprovalOutcome{Status: status, DecidedBy: closed.DecidedBy, Reason: closed.Reason, DecidedAt: e.now()}, false)
			}
		}
		res := ToolResult{Content: reason}
		if pc.Result != nil {
			res = *pc.Result
		}
		e.answer(rs, pc, res)
	}
	run.Status = RunStopped
	run.EndedAt = e.now()
	if status == ApprovalSuperseded {
		run.Error = "superseded by a new message"
	}
	// The answers and the run's end are one commit; a run that could not
	// be read is updated on its own, so that its answers are stored even
	// when it is missing.
	end := Batch{UpdateRun: &run}
	if !loaded {
		end = Batch{}
	}
	if err := e.commit(ctx, rs, end); err != nil {
		e.log.Error("record closed run", "run", run.ID, "err", err)
	}
	if !loaded {
		if err := e.store.Apply(ctx, Batch{UpdateRun: &run}); err != nil {
			e.log.Error("record closed run", "run", run.ID, "err", err)
		}
	}
	out.emit(run.ID, Event{Type: EventCompleted, Status: RunStopped, Text: reason})
	e.countRun(RunStopped)
}
