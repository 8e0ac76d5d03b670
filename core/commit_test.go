package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
)

// commitLog is a store that records every write transaction the engine
// makes: each commit is an fsync, so how many a turn makes is part of
// what the engine promises.
type commitLog struct {
	core.Store
	mu      sync.Mutex
	commits []string     // method of each write
	batches []core.Batch // the batches, in order
}

func (c *commitLog) note(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commits = append(c.commits, method)
}

func (c *commitLog) taken() ([]string, []core.Batch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.commits...), append([]core.Batch(nil), c.batches...)
}

func (c *commitLog) Apply(ctx context.Context, b core.Batch) error {
	c.mu.Lock()
	c.commits = append(c.commits, "Apply")
	c.batches = append(c.batches, b)
	c.mu.Unlock()
	return c.Store.Apply(ctx, b)
}

func (c *commitLog) SaveInbound(ctx context.Context, in core.Inbound) (bool, error) {
	c.note("SaveInbound")
	return c.Store.SaveInbound(ctx, in)
}

// A turn with one read-only tool call is four commits: the inbound
// message; the run's start; the assistant message that asked for the tool
// with the tool's result and audit entry; the answer with the run's end.
// No commit leaves a tool call without its result in the transcript.
func TestTurnCommitsOncePerStep(t *testing.T) {
	log := &commitLog{}
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { log.Store = s; return log }))
	h.llm.Push(toolCalls(call("c1", "get_pods", `{"namespace":"prod"}`)), text("3 pods are running in prod."))
	h.say("what is running in prod?")
	done := h.rec.WaitCompleted(t, 1)
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	commits, batches := log.taken()
	if diff := cmp.Diff([]string{"SaveInbound", "Apply", "Apply", "Apply"}, commits); diff != "" {
		t.Fatalf("write transactions of the turn (-want +got):\n%s", diff)
	}
	roles := func(b core.Batch) []core.Role {
		var out []core.Role
		for _, m := range b.Messages {
			out = append(out, m.Role)
		}
		return out
	}
	start, step, end := batches[0], batches[1], batches[2]
	if start.CreateRun == nil || len(start.InboundDone) != 1 || start.Conversation == nil ||
		!cmp.Equal(roles(start), []core.Role{core.RoleUser}) {
		t.Errorf("start batch = %+v, want the run, the user message, the message marked done and the title", start)
	}
	if !cmp.Equal(roles(step), []core.Role{core.RoleAssistant, core.RoleTool}) || len(step.Messages[0].ToolCalls) != 1 ||
		len(step.Audit) != 1 || step.Audit[0].Kind != core.AuditExecuted || step.UpdateRun != nil {
		t.Errorf("tool step batch = %+v, want the tool call, its result and its audit entry", step)
	}
	if !cmp.Equal(roles(end), []core.Role{core.RoleAssistant}) || end.UpdateRun == nil || end.UpdateRun.Status != core.RunDone {
		t.Errorf("end batch = %+v, want the answer and the run done", end)
	}

	msgs, err := h.store.Messages(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	var got []core.Role
	for _, m := range msgs {
		got = append(got, m.Role)
		if m.RunID != done.RunID {
			t.Errorf("message %s has run %q, want %q", m.Role, m.RunID, done.RunID)
		}
	}
	if diff := cmp.Diff([]core.Role{core.RoleUser, core.RoleAssistant, core.RoleTool, core.RoleAssistant}, got); diff != "" {
		t.Errorf("stored transcript (-want +got):\n%s", diff)
	}
	pending, err := h.store.PendingInbound(context.Background())
	if err != nil || len(pending) != 0 {
		t.Errorf("PendingInbound = %v, %v; want the message marked done", pending, err)
	}
}

// Pausing for approval is one commit: the assistant message, the request,
// its audit entry and the checkpoint land together.
func TestPauseIsOneCommit(t *testing.T) {
	log := &commitLog{}
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { log.Store = s; return log }))
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)))
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	h.rec.WaitCompleted(t, 1)
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	commits, batches := log.taken()
	if diff := cmp.Diff([]string{"SaveInbound", "Apply", "Apply", "Apply"}, commits); diff != "" {
		t.Fatalf("write transactions (-want +got):\n%s", diff)
	}
	pause := batches[1]
	if len(pause.Messages) != 1 || len(pause.Approvals) != 1 || pause.Approvals[0].ID != a.ID || pause.Checkpoint == nil ||
		len(pause.Audit) != 1 || pause.Audit[0].Kind != core.AuditProposed {
		t.Errorf("pause batch = %+v, want the assistant message, the request, its audit entry and the checkpoint", pause)
	}
	if end := batches[2]; end.UpdateRun == nil || end.UpdateRun.Status != core.RunAwaitingApproval {
		t.Errorf("end batch = %+v, want the run awaiting approval", end)
	}
}

// failOnce fails the first batch that carries an audit entry.
type failOnce struct {
	core.Store
	mu     sync.Mutex
	failed bool
}

func (f *failOnce) Apply(ctx context.Context, b core.Batch) error {
	f.mu.Lock()
	fail := !f.failed && len(b.Audit) > 0
	f.failed = f.failed || fail
	f.mu.Unlock()
	if fail {
		return errors.New("disk I/O error")
	}
	return f.Store.Apply(ctx, b)
}

// A commit that fails keeps what it carried staged: the next commit stores
// it, so the transcript and the audit log end up whole and in order.
func TestFailedCommitIsRetriedWithTheNext(t *testing.T) {
	h := newHarness(t, withStoreWrapper(func(s core.Store) core.Store { return &failOnce{Store: s} }))
	h.llm.Push(toolCalls(call("c1", "get_pods", `{"namespace":"prod"}`)), text("3 pods are running in prod."))
	h.say("what is running in prod?")
	if done := h.rec.WaitCompleted(t, 1); done.Status != core.RunDone {
		t.Fatalf("completed = %s, want done", done.Status)
	}
	msgs, err := h.store.Messages(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	var got []core.Role
	for _, m := range msgs {
		got = append(got, m.Role)
	}
	if diff := cmp.Diff([]core.Role{core.RoleUser, core.RoleAssistant, core.RoleTool, core.RoleAssistant}, got); diff != "" {
		t.Errorf("stored transcript (-want +got):\n%s", diff)
	}
	audit, err := h.store.Audit(context.Background(), core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].Kind != core.AuditExecuted {
		t.Errorf("audit = %+v, want the execution recorded once", audit)
	}
}
