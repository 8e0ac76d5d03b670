package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// maxResultChars bounds a tool result sent to the model: one huge log dump
// must not push the conversation out of the context window.
const maxResultChars = 20000

// gate runs the batch in source order. Reads run at once (consecutive reads
// concurrently); the first call that needs approval pauses the run with every
// approval-needing call of the rest of the batch posted for decision.
func (e *Engine) gate(ctx context.Context, rs *runState) node {
	bg := context.WithoutCancel(ctx)
	if !rs.resumed { // a resumed batch was announced before the pause
		e.announce(rs)
	}
	rs.resumed = false
	batch := rs.batch
	rs.batch = nil
	for i := 0; i < len(batch); {
		if ctx.Err() != nil {
			e.answerRest(rs, batch[i:], "not executed: the run was stopped")
			rs.status = RunStopped
			return nodeFinal
		}
		if e.hasSteer(rs.act) {
			e.answerRest(rs, batch[i:], "skipped: new user message")
			return nodeModel
		}
		pc := batch[i]
		switch {
		case pc.Result != nil:
			if pc.Verdict.Action == ActionDeny {
				// No card: the chat shows the call failing with the rule.
				info := callInfo(pc)
				rs.out.emit(rs.run.ID, Event{Type: EventToolError, Call: &info, Error: pc.Verdict.Denial()})
			}
			e.answer(rs, pc, *pc.Result)
			i++
		case pc.inProcess():
			info := callInfo(pc)
			rs.out.emit(rs.run.ID, Event{Type: EventToolExecuting, Call: &info})
			start := e.now()
			res := e.runVirtual(ctx, rs, pc)
			e.emitResult(rs, pc, res, e.now().Sub(start))
			e.answer(rs, pc, res)
			i++
		case pc.asks() && pc.ApprovalID == "":
			if err := e.pause(bg, rs, batch[i:], nil); err != nil {
				e.answerRest(rs, batch[i:], "not executed: opsgate could not record the approval request")
				return e.fail(rs, err)
			}
			rs.status = RunAwaitingApproval
			return nodeFinal
		case pc.asks():
			if fresh, changed := e.recheck(ctx, rs, pc); changed {
				// What was approved is not what would run: nothing runs,
				// the call is asked again with what it would change now.
				rest := append([]PendingCall(nil), batch[i:]...)
				rest[0].ApprovalID = ""
				if err := e.pause(bg, rs, rest, map[string]Preview{pc.Call.ID: fresh}); err != nil {
					e.answerRest(rs, batch[i:], "not executed: opsgate could not record the approval request")
					return e.fail(rs, err)
				}
				rs.status = RunAwaitingApproval
				return nodeFinal
			}
			e.answer(rs, pc, e.runApproved(ctx, rs, pc))
			e.flush(bg, rs)
			i++
		default:
			j := i
			for j < len(batch) && batch[j].Result == nil && !batch[j].asks() && !batch[j].inProcess() {
				j++
			}
			results := e.runReads(ctx, rs, batch[i:j])
			for k, res := range results {
				e.answer(rs, batch[i+k], res)
			}
			e.flush(bg, rs)
			i = j
		}
	}
	return nodeModel
}

// announce emits tools.pending for a new batch.
func (e *Engine) announce(rs *runState) {
	infos := make([]CallInfo, len(rs.batch))
	for i, pc := range rs.batch {
		infos[i] = callInfo(pc)
	}
	rs.out.emit(rs.run.ID, Event{Type: EventToolsPending, Calls: infos})
}

func callInfo(pc PendingCall) CallInfo {
	return CallInfo{
		ID: pc.Call.ID, Name: pc.Call.Name, Toolset: pc.Tool.Toolset, Arguments: pc.Call.Arguments,
		Risk: pc.Tool.Risk, RequiresApproval: pc.asks(),
	}
}

// answer adds the call's result to the transcript (staged: see commit.go).
func (e *Engine) answer(rs *runState, pc PendingCall, res ToolResult) {
	content := res.Content
	if e.cfg.RedactToolResult != nil {
		content = e.cfg.RedactToolResult(content)
	}
	if len(content) > maxResultChars {
		content = Truncate(content, maxResultChars, Bytes) + fmt.Sprintf("\n[truncated: the result had %d bytes]", len(res.Content))
	}
	if res.IsError && content == "" {
		content = "error"
	}
	e.stage(rs, Message{Role: RoleTool, ToolCallID: pc.Call.ID, Name: pc.Call.Name, Content: content})
}

func (e *Engine) answerRest(rs *runState, rest []PendingCall, text string) {
	for _, pc := range rest {
		res := ToolResult{Content: text}
		if pc.Result != nil {
			res = *pc.Result
		}
		e.answer(rs, pc, res)
	}
}

// runReads runs read-only calls and returns their results in order. One
// call runs here and its audit entry is committed with its result; several
// run concurrently, and each records its audit entry as soon as it returns
// rather than waiting for the slowest.
func (e *Engine) runReads(ctx context.Context, rs *runState, calls []PendingCall) []ToolResult {
	requester := Actor{ID: rs.run.Requester.ID, Name: rs.run.Requester.Name}
	if len(calls) == 1 {
		res, entry := e.execTool(ctx, rs, calls[0], calls[0].Call.Arguments, requester, nil)
		e.stageAudit(rs, entry)
		return []ToolResult{res}
	}
	results := make([]ToolResult, len(calls))
	var wg sync.WaitGroup
	for k, pc := range calls {
		wg.Go(func() {
			var entry AuditEntry
			results[k], entry = e.execTool(ctx, rs, pc, pc.Call.Arguments, requester, nil)
			e.audit(context.WithoutCancel(ctx), entry)
		})
	}
	wg.Wait()
	return results
}

// runApproved executes a call whose approval was decided, only if it was
// approved and the action about to run hashes to exactly what was approved.
func (e *Engine) runApproved(ctx context.Context, rs *runState, pc PendingCall) ToolResult {
	bg := context.WithoutCancel(ctx)
	a, err := e.store.Approval(bg, pc.ApprovalID)
	if err != nil {
		return ToolResult{IsError: true, Content: "not executed: the approval request could not be read: " + err.Error()}
	}
	switch a.Status {
	case ApprovalApproved:
	case ApprovalDenied:
		text := "denied by " + a.DecidedBy.String()
		if a.Reason != "" {
			text += ": " + a.Reason
		}
		return ToolResult{Content: text + ". The tool was not run."}
	case ApprovalExpired:
		return ToolResult{Content: "not executed: the approval request expired without a decision, which counts as a denial."}
	default:
		return ToolResult{Content: fmt.Sprintf("not executed: the approval request is %s.", a.Status)}
	}
	callHash, err1 := ActionHash(pc.Tool.Toolset, pc.Tool.Remote, pc.Call.Arguments)
	storedHash, err2 := ActionHash(a.Toolset, a.Tool, a.Arguments)
	if err := errors.Join(err1, err2); err != nil || callHash != a.ActionHash || storedHash != a.ActionHash ||
		a.CallID != pc.Call.ID || a.RunID != rs.run.ID {
		e.audit(bg, AuditEntry{Kind: AuditMismatch, ConvKey: rs.run.ConvKey, RunID: rs.run.ID, ApprovalID: a.ID,
			Actor: a.DecidedBy, Toolset: a.Toolset, Tool: a.Tool, ActionHash: a.ActionHash, Risk: a.Risk,
			Detail: fmt.Sprintf("call hash %s, stored action hash %s", callHash, storedHash)})
		info := callInfo(pc)
		msg := "refused: the action about to run does not match the approved action; nothing was run"
		rs.out.emit(rs.run.ID, Event{Type: EventToolError, Call: &info, Error: msg})
		return ToolResult{IsError: true, Content: msg + "."}
	}
	// What runs is exactly what was approved: the stored canonical arguments.
	res, entry := e.execTool(ctx, rs, pc, a.Arguments, a.DecidedBy, &a)
	e.stageAudit(rs, entry)
	return res
}

// execTool runs one tool call and reports it, and returns the audit entry
// of the execution for the caller to record. A Go error from the host is
// turned into an error result naming the server; it is never retried here
// (the host restarts the server on next use).
func (e *Engine) execTool(ctx context.Context, rs *runState, pc PendingCall, args []byte, actor Actor, a *Approval) (ToolResult, AuditEntry) {
	id := rs.run.ID
	info := callInfo(pc)
	info.Arguments = args
	rs.out.emit(id, Event{Type: EventToolExecuting, Call: &info})
	start := e.now()
	res, err := e.tools.Call(ctx, pc.Tool, args, func(p Progress) {
		pi := info
		pi.Progress = &p
		rs.out.emit(id, Event{Type: EventToolProgress, Call: &pi})
	})
	dur := e.now().Sub(start)
	if err != nil {
		if ctx.Err() != nil {
			res = ToolResult{IsError: true, Content: "cancelled: the run was stopped while the tool was running"}
		} else {
			res = ToolResult{IsError: true, Content: err.Error() + "; the server will be restarted on next use"}
		}
	}
	e.emitResult(rs, pc, res, dur)
	entry := AuditEntry{Time: e.now(), Kind: AuditExecuted, ConvKey: rs.run.ConvKey, RunID: id, Actor: actor,
		Toolset: pc.Tool.Toolset, Tool: pc.Tool.Remote, Risk: pc.Tool.Risk, RiskSource: pc.Tool.RiskSource, Duration: dur}
	if h, herr := ActionHash(pc.Tool.Toolset, pc.Tool.Remote, args); herr == nil {
		entry.ActionHash = h
	}
	if a != nil {
		entry.ApprovalID = a.ID
	}
	if res.IsError {
		entry.Kind = AuditFailed
		entry.Detail = Truncate(res.Content, 500, Bytes)
	}
	return res, entry
}

func (e *Engine) emitResult(rs *runState, pc PendingCall, res ToolResult, dur time.Duration) {
	info := callInfo(pc)
	info.Result = Truncate(res.Content, 2000, Bytes)
	info.IsError = res.IsError
	ev := Event{Type: EventToolResult, Call: &info, Duration: dur}
	if res.IsError {
		ev.Type = EventToolError
		ev.Error = Truncate(res.Content, 500, Bytes)
	}
	rs.out.emit(rs.run.ID, ev)
}

// pause creates the approval requests of the rest of the batch, checkpoints
// the run and posts the requests. The checkpoint is stored before anyone can
// see a button, so that no decision can arrive for a run that cannot resume.
// Calls that already have a request (decided ones of a resumed batch) keep
// it. fresh holds the previews of calls asked again because what they
// would change changed (by call id); other requests get their preview in
// the background, after their card is posted.
func (e *Engine) pause(ctx context.Context, rs *runState, rest []PendingCall, fresh map[string]Preview) error {
	now := e.now()
	rest = append([]PendingCall(nil), rest...)
	var approvals []Approval
	for k := range rest {
		pc := &rest[k]
		if !pc.asks() || pc.ApprovalID != "" {
			continue
		}
		hash, err := ActionHash(pc.Tool.Toolset, pc.Tool.Remote, pc.Call.Arguments)
		if err != nil {
			return err
		}
		a := Approval{
			ID: newID(), RunID: rs.run.ID, ConvKey: rs.run.ConvKey, CallID: pc.Call.ID,
			Toolset: pc.Tool.Toolset, Tool: pc.Tool.Remote, Arguments: pc.Call.Arguments, ActionHash: hash,
			Risk: pc.Tool.Risk, Requester: rs.run.Requester, Status: ApprovalPending,
			CreatedAt: now, ExpiresAt: now.Add(e.cfg.ApprovalExpiry), Verdict: pc.Verdict,
		}
		if p, ok := fresh[pc.Call.ID]; ok {
			a.Preview = &p
		} else if e.previewer != nil && e.previewer.Previews(pc.Tool) {
			a.Preview = &Preview{Status: PreviewPending}
		}
		pc.ApprovalID = a.ID
		approvals = append(approvals, a)
	}
	var proposed []AuditEntry
	for _, a := range approvals {
		proposed = append(proposed, AuditEntry{Time: now, Kind: AuditProposed, ConvKey: a.ConvKey, RunID: a.RunID, ApprovalID: a.ID,
			Actor: a.Requester, Toolset: a.Toolset, Tool: a.Tool, ActionHash: a.ActionHash, Risk: a.Risk,
			Detail: withPreviewHash("", a.Preview)})
	}
	setRiskSources(proposed, rest)
	cp := Checkpoint{
		RunID: rs.run.ID, ConvKey: rs.run.ConvKey, Requester: rs.run.Requester, Pending: rest,
		Toolsets: rs.toolsets, Iteration: rs.run.Iterations, CreatedAt: now,
		// The approval events and completed follow right away.
		Seq: rs.out.lastSeq() + int64(len(approvals)) + 1,
	}
	// The transcript so far, the requests, their audit entries and the
	// checkpoint are one commit: no request exists without its checkpoint.
	if err := e.commit(ctx, rs, Batch{Approvals: approvals, Audit: proposed, Checkpoint: &cp}); err != nil {
		return err
	}
	for _, a := range approvals {
		a := a
		pc := rest[indexOfApproval(rest, a.ID)]
		info := callInfo(pc)
		rs.out.emit(rs.run.ID, Event{Type: EventToolAwaitingApproval, Call: &info, Approval: &a})
		if a.Preview != nil && a.Preview.Status == PreviewPending {
			e.startPreview(ctx, a, pc.Tool)
		}
	}
	return nil
}

func indexOfApproval(calls []PendingCall, id string) int {
	for i, pc := range calls {
		if pc.ApprovalID == id {
			return i
		}
	}
	return -1
}

func (e *Engine) audit(ctx context.Context, entry AuditEntry) {
	if entry.Time.IsZero() {
		entry.Time = e.now()
	}
	if err := e.store.Apply(ctx, Batch{Audit: []AuditEntry{entry}}); err != nil {
		e.log.Error("audit append failed", "kind", entry.Kind, "run", entry.RunID, "err", err)
	}
}
