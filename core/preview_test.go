package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
)

// replicaPreviewer previews scale_deployment from a replica count the test
// sets, as a cluster's live object would be read: "replicas: 2 → 3",
// hashed by the live count.
type replicaPreviewer struct {
	live  atomic.Int64
	mu    sync.Mutex
	calls int
	// block, when set, makes Preview wait for it (or its ctx).
	block chan struct{}
}

func (p *replicaPreviewer) Previews(tool core.Tool) bool { return tool.Remote == "scale_deployment" }

func (p *replicaPreviewer) Preview(ctx context.Context, _ core.Tool, args json.RawMessage) (core.Preview, error) {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	if p.block != nil {
		select {
		case <-p.block:
		case <-ctx.Done():
			return core.Preview{}, ctx.Err()
		}
	}
	var a struct{ Replicas int }
	if err := json.Unmarshal(args, &a); err != nil {
		return core.Preview{}, err
	}
	live := p.live.Load()
	return core.Preview{
		Summary: fmt.Sprintf("replicas: %d → %d", live, a.Replicas),
		Diff:    fmt.Sprintf("-replicas: %d\n+replicas: %d", live, a.Replicas),
		Hash:    fmt.Sprintf("live-%d", live),
	}, nil
}

// waitPreview waits for the approval event that carries a's preview in
// the given status.
func waitPreview(t *testing.T, rec *coretest.Recorder, id string, status core.PreviewStatus) core.Approval {
	t.Helper()
	ev := rec.Wait(t, 10*time.Second, 1, func(ev core.Event) bool {
		return ev.Approval != nil && ev.Approval.ID == id && ev.Approval.Preview != nil && ev.Approval.Preview.Status == status
	})
	return *ev.Approval
}

// The card is posted with a pending preview, and the preview follows on
// the same request; the decision's audit entry records its hash.
func TestPreviewFollowsTheCard(t *testing.T) {
	p := &replicaPreviewer{}
	p.live.Store(2)
	h := newHarness(t, withPreviewer(p))
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("web has 3."))
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	if a.Preview == nil || a.Preview.Status != core.PreviewPending {
		t.Fatalf("the first card's preview = %+v, want pending", a.Preview)
	}
	ready := waitPreview(t, h.rec, a.ID, core.PreviewReady)
	if ready.Preview.Summary != "replicas: 2 → 3" || ready.Status != core.ApprovalPending {
		t.Errorf("preview event: status %s, preview %+v", ready.Status, ready.Preview)
	}
	stored, err := h.store.Approval(context.Background(), a.ID)
	if err != nil || stored.Preview == nil || stored.Preview.Hash != "live-2" {
		t.Fatalf("stored approval's preview = %+v (%v)", stored.Preview, err)
	}
	if _, err := h.decide(a.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	h.rec.WaitCompleted(t, 2)
	if got := calledTools(h.k8s); len(got) != 1 {
		t.Errorf("tools called: %v, want scale_deployment once", got)
	}
	entries, _ := h.store.Audit(context.Background(), core.AuditFilter{ApprovalID: a.ID})
	found := false
	for _, e := range entries {
		if e.Kind == core.AuditApproved && strings.Contains(e.Detail, "preview live-2") {
			found = true
		}
	}
	if !found {
		t.Errorf("the approved entry does not record the preview's hash: %+v", entries)
	}
}

// Staleness: what the approver saw changed before the call ran. Nothing
// runs, the old request is marked stale (stored, audited, shown), a new
// request says what changed, and approving that one runs the call once.
func TestStaleApprovalAsksAgain(t *testing.T) {
	p := &replicaPreviewer{}
	p.live.Store(2)
	h := newHarness(t, withPreviewer(p))
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":5}`)), text("web has 5."))
	h.say("scale web to 5")
	a := h.pausedApproval(h.rec, 1)
	waitPreview(t, h.rec, a.ID, core.PreviewReady)

	p.live.Store(4) // someone scaled it by hand meanwhile
	if _, err := h.decide(a.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	again := h.rec.Wait(t, 10*time.Second, 1, func(ev core.Event) bool {
		return ev.Type == core.EventToolAwaitingApproval && ev.Approval != nil && ev.Approval.ID != a.ID
	}).Approval
	if got := calledTools(h.k8s); len(got) != 0 {
		t.Fatalf("a stale approval ran the tool: %v", got)
	}
	if again.Preview == nil || again.Preview.Summary != "replicas: 4 → 5" ||
		again.Preview.Changed != `changed since it was approved: was "replicas: 2 → 5", now "replicas: 4 → 5"` {
		t.Errorf("the new request's preview = %+v", again.Preview)
	}
	if again.CallID != a.CallID || again.ActionHash != a.ActionHash || again.Status != core.ApprovalPending {
		t.Errorf("the new request is not the same action asked again: %+v", again)
	}
	old, err := h.store.Approval(context.Background(), a.ID)
	if err != nil || old.Preview == nil || !strings.Contains(old.Preview.Stale, "changed since it was approved") {
		t.Errorf("the old request is not marked stale: %+v (%v)", old.Preview, err)
	}
	stale, _ := h.store.Audit(context.Background(), core.AuditFilter{ApprovalID: a.ID})
	if n := countKind(stale, core.AuditStale); n != 1 {
		t.Errorf("%d stale entries for the old request, want 1: %+v", n, stale)
	}

	if _, err := h.decide(again.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	h.rec.Wait(t, 10*time.Second, 1, func(ev core.Event) bool {
		return ev.Type == core.EventCompleted && ev.Status == core.RunDone
	})
	if got := calledTools(h.k8s); len(got) != 1 {
		t.Errorf("tools called after the fresh approval: %v, want scale_deployment once", got)
	}
	all, _ := h.store.Audit(context.Background(), core.AuditFilter{ConvKey: conv})
	if n := countKind(all, core.AuditExecuted); n != 1 {
		t.Errorf("%d executed entries, want 1", n)
	}
}

// A preview that takes longer than core.PreviewTimeout shows "no preview:
// timed out" and is never checked for staleness.
func TestSlowPreviewTimesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the preview timeout")
	}
	p := &replicaPreviewer{block: make(chan struct{})}
	defer close(p.block)
	h := newHarness(t, withPreviewer(p))
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("done."))
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	none := waitPreview(t, h.rec, a.ID, core.PreviewNone)
	if none.Preview.Why != "timed out" {
		t.Errorf("why = %q, want timed out", none.Preview.Why)
	}
	if _, err := h.decide(a.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	h.rec.WaitCompleted(t, 2)
	if got := calledTools(h.k8s); len(got) != 1 {
		t.Errorf("tools called: %v, want scale_deployment once", got)
	}
}

func countKind(es []core.AuditEntry, kind string) int {
	n := 0
	for _, e := range es {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// A preview that arrives after the decision binds nothing: the approver
// never saw it, so the call is not checked against it and runs.
func TestLatePreviewIsNotCheckedForStaleness(t *testing.T) {
	p := &replicaPreviewer{block: make(chan struct{})}
	p.live.Store(2)
	h := newHarness(t, withPreviewer(p))
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("done."))
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	if _, err := h.decide(a.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	h.rec.WaitCompleted(t, 2)
	if got := calledTools(h.k8s); len(got) != 1 {
		t.Fatalf("tools called: %v, want scale_deployment once", got)
	}
	p.live.Store(4)
	close(p.block)
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	stored, err := h.store.Approval(context.Background(), a.ID)
	if err != nil || stored.Preview == nil || stored.Preview.Status != core.PreviewReady || stored.Preview.Hash != "" {
		t.Errorf("a late preview is stored as %+v (%v), want ready without a hash", stored.Preview, err)
	}
}

// refusePreviews is a store that does not keep approvals' previews, as
// the process working one out never does if it dies first.
type refusePreviews struct{ core.Store }

func (r refusePreviews) Apply(ctx context.Context, b core.Batch) error {
	if len(b.Previews) > 0 {
		return errors.New("the process working it out died")
	}
	return r.Store.Apply(ctx, b)
}

// sweepCount is a store that counts the reads of every paused run, which
// each sweep for orphaned previews makes.
type sweepCount struct {
	core.Store
	n atomic.Int64
}

func (s *sweepCount) Checkpoints(ctx context.Context, convKey string) ([]core.Checkpoint, error) {
	if convKey == "" {
		s.n.Add(1)
	}
	return s.Store.Checkpoints(ctx, convKey)
}

// A preview that the process which paused the run never stored (it died
// while working it out, or the store refused the write) is worked out
// again by another engine's sweep, stored and shown on the card, instead
// of the card saying "working it out…" for as long as the approval
// waits. A younger one is left to the process working it out.
func TestAPreviewNobodyStoredIsWorkedOutAgain(t *testing.T) {
	first := &replicaPreviewer{}
	first.live.Store(2)
	h := newHarness(t, withPreviewer(first), withStoreWrapper(func(s core.Store) core.Store { return refusePreviews{s} }))
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("web has 3."))
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	if err := h.eng.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, err := h.store.Approval(t.Context(), a.ID); err != nil || got.Preview == nil || got.Preview.Status != core.PreviewPending {
		t.Fatalf("the test needs a preview nobody stored; the approval has %+v (%v)", got.Preview, err)
	}

	// Another replica, whose clock the test moves on.
	second := &replicaPreviewer{}
	second.live.Store(2)
	var skew atomic.Int64
	rec := coretest.NewRecorder()
	d := h.stack.Deps(t, rec)
	counted := &sweepCount{Store: d.Store}
	d.Store = counted
	d.Previewer = second
	d.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	cfg := h.cfg
	cfg.ExpirySweep = 5 * time.Millisecond
	eng := enginetest.Engine(t, cfg, d)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { eng.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		eng.Shutdown(sctx)
	})

	for deadline := time.Now().Add(10 * time.Second); counted.n.Load() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sweeps read the paused runs in 10 s; want 3 (every ExpirySweep)", counted.n.Load())
		}
	}
	second.mu.Lock()
	early := second.calls
	second.mu.Unlock()
	if early != 0 {
		t.Fatalf("a preview %s old was worked out again %d times; want none before %s", time.Since(a.CreatedAt).Round(time.Millisecond), early, 2*core.PreviewTimeout)
	}

	skew.Store(int64(time.Minute))
	ready := waitPreview(t, rec, a.ID, core.PreviewReady)
	if ready.Preview.Summary != "replicas: 2 → 3" || ready.Status != core.ApprovalPending {
		t.Errorf("card after the sweep: status %s, preview %+v", ready.Status, ready.Preview)
	}
	stored, err := h.store.Approval(t.Context(), a.ID)
	if err != nil || stored.Preview == nil || stored.Preview.Status != core.PreviewReady || stored.Preview.Hash != "live-2" {
		t.Fatalf("stored preview %+v (%v); want it ready, hashed live-2", stored.Preview, err)
	}
	// Each sweep that finds it pending again does not start another.
	if err := eng.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	second.mu.Lock()
	defer second.mu.Unlock()
	if second.calls != 1 {
		t.Errorf("the preview was worked out %d times; want once", second.calls)
	}
}
