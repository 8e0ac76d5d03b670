package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
)

func TestReadOnlyCallRunsWithoutApproval(t *testing.T) {
	h := newHarness(t)
	h.llm.Push(toolCalls(call("c1", "get_pods", `{"namespace":"prod"}`)), text("3 pods are running in prod."))
	h.say("what is running in prod?")

	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunDone || done.Text != "3 pods are running in prod." {
		t.Fatalf("completed = %s %q, want done with the answer", done.Status, done.Text)
	}
	evs := h.rec.Events()
	for _, typ := range []core.EventType{core.EventToolAwaitingApproval, core.EventToolApproved, core.EventToolDenied} {
		if hasType(evs, typ) {
			t.Errorf("a read-only call produced %s:\n%s", typ, coretest.Dump(evs))
		}
	}
	pending := evs[indexOf(evs, 0, core.EventToolsPending)]
	if len(pending.Calls) != 1 || pending.Calls[0].RequiresApproval || pending.Calls[0].Risk != core.RiskRead {
		t.Errorf("tools.pending = %+v, want one read call without approval", pending.Calls)
	}
	assertOrder(t, evs, core.EventToolsPending, core.EventToolExecuting, core.EventToolResult, core.EventGenerationStart, core.EventCompleted)
	if got := calledTools(h.k8s); len(got) != 1 || got[0] != "get_pods" {
		t.Fatalf("MCP calls = %v, want [get_pods]", got)
	}
	reqs := h.llm.Requests()
	if res := toolResult(t, reqs[1], "c1"); !strings.Contains(res, "prod") {
		t.Errorf("the model did not get the tool's result: %q", res)
	}
	run, err := h.store.Run(context.Background(), done.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != core.RunDone || run.Iterations != 2 || run.TTFT <= 0 || run.Duration <= 0 {
		t.Errorf("stored run = %+v, want done, 2 iterations, TTFT and duration recorded", run)
	}
	audit, err := h.store.Audit(context.Background(), core.AuditFilter{RunID: done.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].Kind != core.AuditExecuted || audit[0].Tool != "get_pods" {
		t.Errorf("audit = %+v, want one executed get_pods", audit)
	}
}

func TestWriteCallPausesForApproval(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)))
	h.say("scale web to 3")

	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunAwaitingApproval {
		t.Fatalf("completed status = %s, want awaiting_approval", done.Status)
	}
	evs := h.rec.Events()
	assertOrder(t, evs, core.EventToolsPending, core.EventToolAwaitingApproval, core.EventCompleted)
	pending := evs[indexOf(evs, 0, core.EventToolsPending)]
	if !pending.Calls[0].RequiresApproval || pending.Calls[0].Risk != core.RiskWrite {
		t.Errorf("tools.pending = %+v, want a write requiring approval", pending.Calls)
	}
	a := h.pausedApproval(h.rec, 1)
	if a.Tool != "scale_deployment" || a.Toolset != "k8s" || a.Requester != alice || len(a.ID) < 32 || a.Status != core.ApprovalPending {
		t.Errorf("approval = %+v", a)
	}
	want, _ := core.ActionHash("k8s", "scale_deployment", []byte(`{"replicas":3,"name":"web"}`))
	if a.ActionHash != want {
		t.Errorf("action hash = %s, want %s (canonical JSON of server, tool, arguments)", a.ActionHash, want)
	}
	cp, err := h.store.Checkpoint(context.Background(), done.RunID)
	if err != nil {
		t.Fatalf("no checkpoint for the paused run: %v", err)
	}
	if len(cp.Pending) != 1 || cp.Pending[0].ApprovalID != a.ID || cp.Iteration != 1 {
		t.Errorf("checkpoint = %+v", cp)
	}
	if calls := h.k8s.Calls(); len(calls) != 0 {
		t.Fatalf("a write ran before approval: %+v", calls)
	}
}

func TestApproveResumesTheRun(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("web now has 3 replicas."))
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	h.rec.WaitCompleted(t, 1)

	got, err := h.decide(a.ID, alice, true, "")
	if err != nil || got.Status != core.ApprovalApproved || got.DecidedBy != alice {
		t.Fatalf("Decide = %+v, %v", got, err)
	}
	done := h.rec.WaitCompleted(t, 2)
	if done.Status != core.RunDone || done.Text != "web now has 3 replicas." {
		t.Fatalf("completed = %s %q", done.Status, done.Text)
	}
	evs := h.rec.RunEvents(done.RunID)
	first := indexOf(evs, 0, core.EventCompleted) + 1
	assertOrder(t, evs[first:], core.EventToolApproved, core.EventToolExecuting, core.EventToolResult, core.EventGenerationStart, core.EventCompleted)
	assertSeqIncreasing(t, evs)
	calls := h.k8s.Calls()
	if len(calls) != 1 || calls[0].Tool != "scale_deployment" || calls[0].Args["name"] != "web" || calls[0].Args["replicas"] != float64(3) {
		t.Fatalf("MCP calls = %+v, want exactly the approved scale_deployment", calls)
	}
	if res := toolResult(t, h.llm.Requests()[1], "c1"); !strings.Contains(res, "web") {
		t.Errorf("model did not get the result: %q", res)
	}
	kinds := auditKinds(t, h, done.RunID)
	if strings.Join(kinds, ",") != "proposed,approved,executed" {
		t.Errorf("audit kinds = %v", kinds)
	}
}

func TestApproveResumesInAnotherEngine(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("done after restart"))
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	paused := h.rec.WaitCompleted(t, 1)

	// A new process over the same store receives the click.
	eng2, rec2 := h.newEngine()
	if _, err := eng2.Decide(context.Background(), core.Decision{ApprovalID: a.ID, Actor: alice, Approve: true}); err != nil {
		t.Fatal(err)
	}
	done := rec2.WaitCompleted(t, 1)
	if done.Status != core.RunDone || done.RunID != paused.RunID || done.Text != "done after restart" {
		t.Fatalf("completed on the new engine = %+v", done)
	}
	evs := rec2.Events()
	assertOrder(t, evs, core.EventToolApproved, core.EventToolExecuting, core.EventToolResult, core.EventCompleted)
	if evs[0].Seq <= paused.Seq {
		t.Errorf("resumed events restart the sequence: first %d, paused at %d", evs[0].Seq, paused.Seq)
	}
	if got := calledTools(h.k8s); len(got) != 1 || got[0] != "scale_deployment" {
		t.Fatalf("MCP calls = %v", got)
	}
	if hasType(h.rec.Events(), core.EventToolExecuting) {
		t.Error("the first engine executed the tool")
	}
}

func TestDenyGivesTheModelADenialResult(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":0}`)), text("OK, I did not scale web."))
	h.say("scale web to 0")
	a := h.pausedApproval(h.rec, 1)

	got, err := h.decide(a.ID, alice, false, "not during peak")
	if err != nil || got.Status != core.ApprovalDenied {
		t.Fatalf("Decide = %+v, %v", got, err)
	}
	done := h.rec.WaitCompleted(t, 2)
	if done.Status != core.RunDone || done.Text != "OK, I did not scale web." {
		t.Fatalf("completed = %+v", done)
	}
	denied := h.rec.Wait(t, time.Second, 1, coretest.Of(core.EventToolDenied))
	if denied.Approval.Status != core.ApprovalDenied || denied.Approval.DecidedBy != alice {
		t.Errorf("tool.denied approval = %+v", denied.Approval)
	}
	res := toolResult(t, h.llm.Requests()[1], "c1")
	if !strings.Contains(res, "denied by Alice: not during peak") {
		t.Errorf("denial result = %q", res)
	}
	if len(h.k8s.Calls()) != 0 {
		t.Fatalf("a denied tool ran: %+v", h.k8s.Calls())
	}
}

func TestMixedBatchRunsInSourceOrder(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(
		call("r1", "get_pods", `{"namespace":"prod"}`),
		call("w1", "scale_deployment", `{"name":"web","replicas":5}`),
		call("r2", "get_logs", `{"pod":"web-1"}`),
	), text("scaled and checked"))
	h.say("check, scale, check")
	a := h.pausedApproval(h.rec, 1)
	h.rec.WaitCompleted(t, 1)
	if got := calledTools(h.k8s); strings.Join(got, ",") != "get_pods" {
		t.Fatalf("before approval MCP calls = %v, want only the first read", got)
	}
	if _, err := h.decide(a.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	done := h.rec.WaitCompleted(t, 2)
	if done.Status != core.RunDone {
		t.Fatalf("completed = %+v", done)
	}
	if got := calledTools(h.k8s); strings.Join(got, ",") != "get_pods,scale_deployment,get_logs" {
		t.Fatalf("MCP calls = %v, want read, write, read in source order", got)
	}
	req := h.llm.Requests()[1]
	for _, id := range []string{"r1", "w1", "r2"} {
		toolResult(t, req, id)
	}
}

func TestBatchWithTwoWritesPostsBothAndWaitsForBoth(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(
		call("w1", "scale_deployment", `{"name":"web","replicas":5}`),
		call("w2", "scale_deployment", `{"name":"api","replicas":2}`),
	), text("both handled"))
	h.say("scale web and api")
	a1 := h.pausedApproval(h.rec, 1)
	a2 := h.pausedApproval(h.rec, 2)
	h.rec.WaitCompleted(t, 1)

	if _, err := h.decide(a2.ID, alice, false, ""); err != nil {
		t.Fatal(err)
	}
	// One decision of two: the card updates, the run stays paused.
	h.rec.Wait(t, time.Second, 1, coretest.Of(core.EventToolDenied))
	if _, err := h.decide(a1.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	done := h.rec.WaitCompleted(t, 2)
	if done.Status != core.RunDone {
		t.Fatalf("completed = %+v", done)
	}
	calls := h.k8s.Calls()
	if len(calls) != 1 || calls[0].Args["name"] != "web" {
		t.Fatalf("MCP calls = %+v, want only the approved web scale", calls)
	}
}

func TestDecisionIsOneShotAndBoundToTheActionHash(t *testing.T) {
	t.Run("second decision is already decided", func(t *testing.T) {
		h := newHarness(t)
		h.loadWriteTools()
		h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("ok"))
		h.say("scale")
		a := h.pausedApproval(h.rec, 1)
		if _, err := h.decide(a.ID, alice, true, ""); err != nil {
			t.Fatal(err)
		}
		got, err := h.decide(a.ID, alice, false, "changed my mind")
		if !errors.Is(err, core.ErrAlreadyDecided) || got.Status != core.ApprovalApproved {
			t.Fatalf("second Decide = %+v, %v; want ErrAlreadyDecided and the first decision", got, err)
		}
		h.rec.WaitCompleted(t, 2)
		if n := len(h.k8s.Calls()); n != 1 {
			t.Fatalf("tool ran %d times", n)
		}
	})
	t.Run("a decision for other arguments is refused", func(t *testing.T) {
		h := newHarness(t)
		h.loadWriteTools()
		h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)))
		h.say("scale")
		a := h.pausedApproval(h.rec, 1)
		other, _ := core.ActionHash("k8s", "scale_deployment", []byte(`{"name":"web","replicas":300}`))
		_, err := h.eng.Decide(context.Background(), core.Decision{ApprovalID: a.ID, Actor: alice, Approve: true, ActionHash: other})
		if !errors.Is(err, core.ErrHashMismatch) {
			t.Fatalf("Decide with another action's hash: %v, want ErrHashMismatch", err)
		}
		stored, _ := h.store.Approval(context.Background(), a.ID)
		if stored.Status != core.ApprovalPending {
			t.Fatalf("approval is %s after a mismatched decision", stored.Status)
		}
	})
	t.Run("a tampered checkpoint does not run", func(t *testing.T) {
		h := newHarness(t)
		h.loadWriteTools()
		h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("refused"))
		h.say("scale")
		a := h.pausedApproval(h.rec, 1)
		paused := h.rec.WaitCompleted(t, 1)
		ctx := context.Background()
		cp, err := h.store.Checkpoint(ctx, paused.RunID)
		if err != nil {
			t.Fatal(err)
		}
		cp.Pending[0].Call.Arguments = []byte(`{"name":"web","replicas":300}`)
		if err := h.store.Apply(ctx, core.Batch{Checkpoint: &cp}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.decide(a.ID, alice, true, ""); err != nil {
			t.Fatal(err)
		}
		done := h.rec.WaitCompleted(t, 2)
		if len(h.k8s.Calls()) != 0 {
			t.Fatalf("a tampered action ran: %+v", h.k8s.Calls())
		}
		if res := toolResult(t, h.llm.Requests()[1], "c1"); !strings.Contains(res, "does not match the approved action") {
			t.Errorf("result = %q", res)
		}
		if kinds := auditKinds(t, h, done.RunID); !contains(kinds, core.AuditMismatch) {
			t.Errorf("audit = %v, want a mismatch entry", kinds)
		}
	})
	t.Run("someone else may not decide", func(t *testing.T) {
		h := newHarness(t)
		h.loadWriteTools()
		h.llm.Push(toolCalls(call("c1", "delete_namespace", `{"namespace":"prod"}`)))
		h.say("delete prod")
		a := h.pausedApproval(h.rec, 1)
		if a.Risk != core.RiskDestructive {
			t.Errorf("risk = %s, want destructive", a.Risk)
		}
		if _, err := h.decide(a.ID, bob, true, ""); !errors.Is(err, core.ErrNotAllowed) {
			t.Fatalf("bob's decision: %v, want ErrNotAllowed", err)
		}
		entries, _ := h.store.Audit(context.Background(), core.AuditFilter{ApprovalID: a.ID})
		if len(entries) != 2 || entries[1].Kind != core.AuditRefused || entries[1].Actor != bob {
			t.Fatalf("audit = %+v, want proposed then refused by bob", entries)
		}
		if len(h.k8s.Calls()) != 0 {
			t.Fatal("tool ran")
		}
	})
	t.Run("an expired request counts as denied", func(t *testing.T) {
		h := newHarness(t, withConfig(func(c *core.Config) { c.ApprovalExpiry = 50 * time.Millisecond }))
		h.loadWriteTools()
		h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("it expired"))
		h.say("scale")
		a := h.pausedApproval(h.rec, 1)
		time.Sleep(80 * time.Millisecond)
		got, err := h.decide(a.ID, alice, true, "")
		if !errors.Is(err, core.ErrExpired) || got.Status != core.ApprovalExpired {
			t.Fatalf("late Decide = %+v, %v; want ErrExpired", got, err)
		}
		done := h.rec.WaitCompleted(t, 2)
		if done.Status != core.RunDone || len(h.k8s.Calls()) != 0 {
			t.Fatalf("completed = %+v, calls = %+v", done, h.k8s.Calls())
		}
		if res := toolResult(t, h.llm.Requests()[1], "c1"); !strings.Contains(res, "expired") {
			t.Errorf("result = %q", res)
		}
		if _, err := h.decide(a.ID, alice, true, ""); !errors.Is(err, core.ErrAlreadyDecided) {
			t.Errorf("decision after expiry: %v, want ErrAlreadyDecided", err)
		}
	})
	t.Run("the sweeper expires requests nobody answers", func(t *testing.T) {
		h := newHarness(t, withConfig(func(c *core.Config) {
			c.ApprovalExpiry = 50 * time.Millisecond
			c.ExpirySweep = 10 * time.Millisecond
		}))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go h.eng.Run(ctx)
		h.loadWriteTools()
		h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)), text("nobody answered"))
		h.say("scale")
		done := h.rec.WaitCompleted(t, 2)
		if done.Status != core.RunDone || len(h.k8s.Calls()) != 0 {
			t.Fatalf("completed = %+v, calls = %+v", done, h.k8s.Calls())
		}
		denied := h.rec.Wait(t, time.Second, 1, coretest.Of(core.EventToolDenied))
		if denied.Approval.Status != core.ApprovalExpired {
			t.Errorf("tool.denied status = %s, want expired", denied.Approval.Status)
		}
	})
}

func TestMissingAnnotationsRequireApproval(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(call("c1", "restart_pod", `{"pod":"web-1"}`)))
	h.say("restart web-1")
	a := h.pausedApproval(h.rec, 1)
	if a.Tool != "restart_pod" || a.Risk != core.RiskWrite {
		t.Fatalf("approval = %+v, want restart_pod as a write", a)
	}
	if len(h.k8s.Calls()) != 0 {
		t.Fatal("an unannotated tool ran without approval")
	}
}

func TestSchemaInvalidArgumentsAreNeverExecuted(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(
		toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":"three"}`), call("c2", "get_pods", `{}`), call("c3", "made_up_tool", `{}`)),
		text("I need a number."),
	)
	h.say("scale web to three")
	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunDone {
		t.Fatalf("completed = %+v", done)
	}
	if hasType(h.rec.Events(), core.EventToolAwaitingApproval) {
		t.Fatal("invalid arguments were shown for approval")
	}
	if n := len(h.k8s.Calls()); n != 0 {
		t.Fatalf("%d calls reached the MCP server", n)
	}
	req := h.llm.Requests()[1]
	for id, want := range map[string]string{"c1": "invalid arguments for scale_deployment", "c2": "invalid arguments for get_pods", "c3": `unknown tool "made_up_tool"`} {
		if res := toolResult(t, req, id); !strings.Contains(res, want) {
			t.Errorf("result for %s = %q, want it to contain %q", id, res, want)
		}
	}
}

func TestMalformedArgumentsDoNotBreakAPausedBatch(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(
		// The broken call comes after the write, so it is in the checkpoint.
		toolCalls(call("c2", "scale_deployment", `{"name":"web","replicas":2}`), call("c1", "get_pods", `{"namespace": "prod"`)),
		text("fixed"),
	)
	h.say("scale web")
	a := h.pausedApproval(h.rec, 1)
	paused := h.rec.WaitCompleted(t, 1)
	if paused.Status != core.RunAwaitingApproval {
		t.Fatalf("completed = %+v", paused)
	}
	if _, err := h.decide(a.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	if done := h.rec.WaitCompleted(t, 2); done.Status != core.RunDone {
		t.Fatalf("completed = %+v", done)
	}
	if res := toolResult(t, h.llm.Requests()[1], "c1"); !strings.Contains(res, "not valid JSON") {
		t.Errorf("result = %q", res)
	}
	if got := calledTools(h.k8s); strings.Join(got, ",") != "scale_deployment" {
		t.Fatalf("MCP calls = %v", got)
	}
	// Events are a public contract that adapters may serialise.
	for _, ev := range h.rec.Events() {
		if _, err := json.Marshal(ev); err != nil {
			t.Fatalf("%s event cannot be encoded: %v", ev.Type, err)
		}
	}
}

func TestDuplicateInboundMessageIsProcessedOnce(t *testing.T) {
	h := newHarness(t)
	h.llm.Push(text("hello once"))
	in := core.Inbound{ConvKey: conv, MessageID: "tg-42", User: alice, Text: "hi"}
	for range 3 {
		if err := h.eng.Handle(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	h.rec.WaitCompleted(t, 1)
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.llm.Requests()); n != 1 {
		t.Fatalf("model got %d requests for one message delivered three times", n)
	}
	msgs, _ := h.store.Messages(context.Background(), conv)
	users := 0
	for _, m := range msgs {
		if m.Role == core.RoleUser {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("transcript has %d user messages", users)
	}
}

func assertSeqIncreasing(t *testing.T, evs []core.Event) {
	t.Helper()
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq != evs[i-1].Seq+1 {
			t.Fatalf("sequence jumps from %d to %d at %s:\n%s", evs[i-1].Seq, evs[i].Seq, evs[i].Type, coretest.Dump(evs))
		}
	}
}

func auditKinds(t *testing.T, h *harness, runID string) []string {
	t.Helper()
	entries, err := h.store.Audit(context.Background(), core.AuditFilter{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Kind)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The end-of-input denial of the terminal (issue 9) is decided and audited
// as the system, not as a person; the system can only deny, and nobody
// can decide as it through Decide, whatever the approver rule says.
func TestSystemDenialIsAuditedAsTheSystemAndCannotApprove(t *testing.T) {
	const reason = "no answer: input ended"
	h := newHarness(t, withConfig(func(c *core.Config) {
		c.Policy = anyoneDecides{} // a rule that lets anyone decide
	}))
	h.loadWriteTools()
	h.llm.Push(toolCalls(
		call("c1", "scale_deployment", `{"name":"web","replicas":3}`),
		call("c2", "scale_deployment", `{"name":"api","replicas":3}`),
	), text("nothing was scaled"))
	h.say("scale web and api")
	a1, a2 := h.pausedApproval(h.rec, 1), h.pausedApproval(h.rec, 2)
	h.rec.WaitCompleted(t, 1)
	ctx := context.Background()

	// A platform user whose id happens to be "system" is refused, for an
	// approval and for a denial alike, and the attempt is audited.
	for _, approve := range []bool{true, false} {
		_, err := h.eng.Decide(ctx, core.Decision{ApprovalID: a1.ID, Actor: core.SystemActor, Approve: approve, Reason: reason})
		if !errors.Is(err, core.ErrNotAllowed) {
			t.Fatalf("Decide(approve=%v) as the system actor: %v, want ErrNotAllowed", approve, err)
		}
	}
	if _, err := h.eng.Decide(ctx, core.Decision{ApprovalID: a1.ID, Actor: core.Actor{ID: "system", Name: "alice"}, Approve: true}); !errors.Is(err, core.ErrNotAllowed) {
		t.Fatalf("Decide as id system with another name: %v, want ErrNotAllowed", err)
	}

	got, err := h.eng.DenyAsSystem(ctx, a1.ID, reason)
	if err != nil || got.Status != core.ApprovalDenied || got.DecidedBy != core.SystemActor || got.Reason != reason {
		t.Fatalf("DenyAsSystem = %+v, %v; want denied by the system with the reason", got, err)
	}
	if again, err := h.eng.DenyAsSystem(ctx, a1.ID, reason); !errors.Is(err, core.ErrAlreadyDecided) || again.Status != core.ApprovalDenied {
		t.Fatalf("second DenyAsSystem = %+v, %v; want ErrAlreadyDecided", again, err)
	}
	if _, err := h.eng.DenyAsSystem(ctx, "no-such-approval", reason); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("DenyAsSystem of an unknown id: %v, want ErrNotFound", err)
	}
	if _, err := h.decide(a2.ID, alice, false, "not now"); err != nil {
		t.Fatal(err)
	}
	done := h.rec.WaitCompleted(t, 2)
	if done.Status != core.RunDone || len(h.k8s.Calls()) != 0 {
		t.Fatalf("completed = %+v, calls = %+v; want done and nothing run", done, h.k8s.Calls())
	}

	entries, err := h.store.Audit(ctx, core.AuditFilter{ApprovalID: a1.ID})
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Kind   string
		Actor  core.Actor
		Detail string
	}
	var trail []entry
	for _, e := range entries {
		trail = append(trail, entry{e.Kind, e.Actor, e.Detail})
	}
	want := []entry{
		{core.AuditRefused, core.SystemActor, "not an allowed approver: Nobody may decide as system."},
		{core.AuditRefused, core.SystemActor, "not an allowed approver: Nobody may decide as system."},
		{core.AuditRefused, core.Actor{ID: "system", Name: "alice"}, "not an allowed approver: Nobody may decide as system."},
		{core.AuditDenied, core.SystemActor, reason},
	}
	if len(trail) == 0 || trail[0].Kind != core.AuditProposed {
		t.Fatalf("audit of the system-denied approval = %+v, want it to start with the proposal", trail)
	}
	if diff := cmp.Diff(want, trail[1:]); diff != "" {
		t.Errorf("audit of the system-denied approval after the proposal (-want +got):\n%s", diff)
	}
	if res := toolResult(t, h.llm.Requests()[1], "c1"); !strings.Contains(res, "denied by opsgate: "+reason) {
		t.Errorf("the model was told %q, want the system's denial and its reason", res)
	}
}

// anyoneDecides is a policy that lets anyone decide anything.
type anyoneDecides struct{ core.DefaultPolicy }

func (anyoneDecides) MayDecide(core.Approval, core.Actor) core.Eligibility {
	return core.Eligibility{Allowed: true}
}

// Decisions taken in two processes (two engines over one store) on the
// approvals of one paused run number their events from the store: no
// sequence number of the run is given twice, and later events get larger
// ones, also when the first process emits again.
func TestDecisionsInTwoProcessesNeverShareASequenceNumber(t *testing.T) {
	h := newHarness(t)
	h.loadWriteTools()
	h.llm.Push(toolCalls(
		call("w1", "scale_deployment", `{"name":"web","replicas":5}`),
		call("w2", "scale_deployment", `{"name":"api","replicas":2}`),
	), text("both handled"))
	h.say("scale web and api")
	a1 := h.pausedApproval(h.rec, 1)
	a2 := h.pausedApproval(h.rec, 2)
	paused := h.rec.WaitCompleted(t, 1)

	eng2, rec2 := h.newEngine()
	eng3, rec3 := h.newEngine()
	if _, err := eng2.Decide(context.Background(), core.Decision{ApprovalID: a2.ID, Actor: alice, Approve: false}); err != nil {
		t.Fatal(err)
	}
	denied := rec2.Wait(t, time.Second, 1, coretest.Of(core.EventToolDenied))
	if _, err := eng3.Decide(context.Background(), core.Decision{ApprovalID: a1.ID, Actor: alice, Approve: true}); err != nil {
		t.Fatal(err)
	}
	rec3.WaitCompleted(t, 1)
	approved := rec3.Events()[0]
	if approved.Type != core.EventToolApproved {
		t.Fatalf("first event of the third engine = %s", approved.Type)
	}
	if !(paused.Seq < denied.Seq && denied.Seq < approved.Seq) {
		t.Errorf("sequence numbers: paused %d, denied (engine 2) %d, approved (engine 3) %d; want increasing", paused.Seq, denied.Seq, approved.Seq)
	}
	seen := map[int64]core.EventType{}
	for _, rec := range []*coretest.Recorder{h.rec, rec2, rec3} {
		for _, ev := range rec.Events() {
			if ev.RunID != paused.RunID {
				continue
			}
			if prev, dup := seen[ev.Seq]; dup {
				t.Errorf("sequence number %d given to %s and to %s", ev.Seq, prev, ev.Type)
			}
			seen[ev.Seq] = ev.Type
		}
	}

	// The first engine answers the next message: its events come after
	// the third engine's, though its own block still had numbers left.
	h.llm.Push(text("next"))
	h.say("and now?")
	next := h.rec.WaitCompleted(t, 2)
	evs3 := rec3.Events()
	if last3 := evs3[len(evs3)-1]; next.Seq <= last3.Seq {
		t.Errorf("the next run's completed has seq %d, after %d from another engine; want numbers to keep growing", next.Seq, last3.Seq)
	}
}
