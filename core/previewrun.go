package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// startPreview works out a's preview in the background, stores it with
// the approval and shows it on the card (docs/design.md §18). The card is
// already posted; the preview never holds it up.
func (e *Engine) startPreview(ctx context.Context, a Approval, tool Tool) {
	e.workOutPreview(ctx, a, tool, false)
}

// workOutPreview is startPreview; with again (finishOrphanedPreviews) it
// first reads the approval again and does nothing unless its preview is
// still pending: the sweep's read may predate this engine storing it.
func (e *Engine) workOutPreview(ctx context.Context, a Approval, tool Tool, again bool) {
	ctx = context.WithoutCancel(ctx)
	e.mu.Lock()
	if e.previewing[a.ID] {
		e.mu.Unlock()
		return
	}
	e.previewing[a.ID] = true
	e.mu.Unlock()
	e.busy.add(1)
	go func() {
		defer e.busy.add(-1)
		defer func() {
			e.mu.Lock()
			delete(e.previewing, a.ID)
			e.mu.Unlock()
		}()
		if again {
			now, err := e.store.Approval(ctx, a.ID)
			if err != nil || now.Status != ApprovalPending || now.Preview == nil || now.Preview.Status != PreviewPending {
				return
			}
			e.log.Info("working out again a preview nobody stored", "approval", a.ID, "tool", a.Tool)
		}
		p := e.runPreview(ctx, tool, a.Arguments)
		e.savePreview(ctx, a.ID, p)
	}()
}

// orphanedAfter is how old a pending approval's preview must be, still
// being worked out, for another engine to work it out again: twice
// PreviewTimeout, after which the engine that started it has stored a
// preview or "timed out" unless it died or the store refused the write.
const orphanedAfter = 2 * PreviewTimeout

// finishOrphanedPreviews works out again the previews that nobody will
// store: the process that paused the run died, or the store refused its
// write, and the card would say "working it out…" for as long as the
// approval waits. It runs with the expiry sweep, on every replica: two
// that find the same one each work it out, and the later write is the
// one shown, which is harmless.
func (e *Engine) finishOrphanedPreviews(ctx context.Context) {
	if e.previewer == nil {
		return
	}
	cps, err := e.store.Checkpoints(ctx, "")
	if err != nil {
		e.log.Error("sweep: read paused runs for their previews", "err", err)
		return
	}
	for _, cp := range cps {
		for _, pc := range cp.Pending {
			if pc.ApprovalID == "" {
				continue
			}
			a, err := e.store.Approval(ctx, pc.ApprovalID)
			if err != nil || a.Status != ApprovalPending || a.Preview == nil ||
				a.Preview.Status != PreviewPending || e.now().Sub(a.CreatedAt) < orphanedAfter {
				continue
			}
			e.workOutPreview(ctx, a, pc.Tool, true)
		}
	}
}

// runPreview asks the previewer, for at most PreviewTimeout. A previewer
// that does not return in time is left to finish on its own: its answer
// is dropped, and the card says "no preview: timed out".
func (e *Engine) runPreview(ctx context.Context, tool Tool, args json.RawMessage) Preview {
	pctx, cancel := context.WithTimeout(ctx, PreviewTimeout)
	defer cancel()
	type answer struct {
		p   Preview
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- answer{err: fmt.Errorf("preview failed: %v", r)}
			}
		}()
		p, err := e.previewer.Preview(pctx, tool, args)
		done <- answer{p, err}
	}()
	var got answer
	select {
	case got = <-done:
	case <-pctx.Done():
		got.err = pctx.Err()
	}
	if got.err == nil && pctx.Err() != nil {
		got.err = pctx.Err()
	}
	if got.err != nil {
		return noPreview(got.err)
	}
	if got.p.Status == "" {
		got.p.Status = PreviewReady
	}
	return got.p
}

// savePreview stores p with approval id and, while the approval is still
// pending, shows it again with its preview (every card edits itself in
// place). A preview that arrives after the decision is only stored,
// without its hash: the console and `opsgate approvals show` have it, the
// decided cards are left as they are.
func (e *Engine) savePreview(ctx context.Context, id string, p Preview) {
	if a, err := e.store.Approval(ctx, id); err == nil && a.Status != ApprovalPending {
		// Decided before anyone saw it: the decision is bound to nothing
		// it showed, so it is not checked for staleness either.
		p.Hash = ""
	}
	if err := e.store.Apply(ctx, Batch{Previews: []ApprovalPreview{{ApprovalID: id, Preview: p}}}); err != nil {
		e.log.Error("store an approval's preview", "approval", id, "err", err)
		return
	}
	a, err := e.store.Approval(ctx, id)
	if err != nil {
		e.log.Error("read an approval after its preview", "approval", id, "err", err)
		return
	}
	if a.Status == ApprovalPending {
		e.emitApproval(ctx, EventToolAwaitingApproval, a)
	}
}

// recheck reads again, right before an approved call runs, what its
// preview compared. It reports changed, with the preview as it is now,
// when that is no longer what the approver saw; then the old request is
// marked stale (stored, audited and shown on its card) and the caller asks
// again. A request whose preview had nothing to compare (no Hash) is not
// checked.
func (e *Engine) recheck(ctx context.Context, rs *runState, pc PendingCall) (Preview, bool) {
	if e.previewer == nil || pc.ApprovalID == "" {
		return Preview{}, false
	}
	bg := context.WithoutCancel(ctx)
	a, err := e.store.Approval(bg, pc.ApprovalID)
	if err != nil || a.Status != ApprovalApproved || a.Preview == nil || a.Preview.Hash == "" {
		return Preview{}, false
	}
	fresh := e.runPreview(ctx, pc.Tool, a.Arguments)
	if fresh.Status == PreviewReady && fresh.Hash == a.Preview.Hash {
		return Preview{}, false
	}
	if ctx.Err() != nil {
		return Preview{}, false // stopped: the gate answers the call as stopped
	}
	fresh.Changed = changedSince(*a.Preview, fresh)
	old := *a.Preview
	old.Stale = "not run: " + fresh.Changed + "; asked again in a new request"
	e.audit(bg, AuditEntry{Kind: AuditStale, ConvKey: a.ConvKey, RunID: a.RunID, ApprovalID: a.ID, Actor: a.DecidedBy,
		Toolset: a.Toolset, Tool: a.Tool, ActionHash: a.ActionHash, Risk: a.Risk,
		Detail: fmt.Sprintf("%s (preview %s, now %s)", fresh.Changed, short(a.Preview.Hash), short(fresh.Hash))})
	if err := e.store.Apply(bg, Batch{Previews: []ApprovalPreview{{ApprovalID: a.ID, Preview: old}}}); err != nil {
		e.log.Error("mark an approval stale", "approval", a.ID, "err", err)
	}
	a.Preview = &old
	info := callInfo(pc)
	rs.out.emit(rs.run.ID, Event{Type: EventToolApproved, Call: &info, Approval: &a})
	return fresh, true
}

// changedSince says, in a line, how what a call would change now differs
// from what the approver saw.
func changedSince(old, now Preview) string {
	switch {
	case now.Status != PreviewReady:
		return "changed since it was approved: it could not be read again (" + now.Why + ")"
	case old.Summary != "" && now.Summary != "" && old.Summary != now.Summary:
		return fmt.Sprintf("changed since it was approved: was %q, now %q", old.Summary, now.Summary)
	default:
		return "changed since it was approved: " + strings.TrimSpace(firstLine(now.Summary, "the object changed"))
	}
}

func firstLine(s, fallback string) string {
	s, _, _ = strings.Cut(s, "\n")
	if strings.TrimSpace(s) == "" {
		return fallback
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "none"
	}
	return h
}

// withPreviewHash adds to an approval's audit detail what its preview saw
// (docs/design.md §18: preview reads are not tool runs in the audit; the
// approval's entry records the preview's hash).
func withPreviewHash(detail string, p *Preview) string {
	if p == nil || p.Hash == "" {
		return detail
	}
	if detail != "" {
		detail += "; "
	}
	return detail + "preview " + p.Hash
}
