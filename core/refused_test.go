package core_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// A call of a tool the model was not given (made up, or a write tool of a
// toolset loaded read-only) is answered with an error, runs nothing and is
// audited as refused, naming the tool and why.
func TestUnknownToolCallIsAuditedAsRefused(t *testing.T) {
	h := newHarness(t) // k8s loaded read-only
	h.llm.Push(
		toolCalls(call("c1", "made_up_tool", `{}`), call("c2", "scale_deployment", `{"name":"web","replicas":3}`),
			call("c3", "get_pods", `{"namespace":"prod"}`)),
		text("I can only read."),
	)
	h.say("scale web to 3")
	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunDone {
		t.Fatalf("completed = %+v", done)
	}
	req := h.llm.Requests()[1]
	for _, id := range []string{"c1", "c2"} {
		if res := toolResult(t, req, id); !strings.Contains(res, "unknown tool") || !strings.Contains(res, "nothing was run") {
			t.Errorf("result for %s = %q, want an unknown tool error", id, res)
		}
	}
	if got := calledTools(h.k8s); strings.Join(got, ",") != "get_pods" {
		t.Errorf("MCP calls = %v, want only get_pods", got)
	}
	if hasType(h.rec.Events(), core.EventToolAwaitingApproval) {
		t.Error("a tool the model was not given was shown for approval")
	}

	audit, err := h.store.Audit(context.Background(), core.AuditFilter{RunID: done.RunID})
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]core.AuditEntry{}
	for _, e := range audit {
		if e.Kind == core.AuditRefused {
			refused[e.Tool] = e
		}
	}
	if len(refused) != 2 || len(audit) != 3 {
		t.Fatalf("audit = %+v, want two refused calls and get_pods executed", audit)
	}
	if e := refused["made_up_tool"]; e.Actor != alice || !strings.Contains(e.Detail, `"made_up_tool"`) || !strings.Contains(e.Detail, "no loaded toolset") {
		t.Errorf("refused made_up_tool = %+v, want alice's run and a detail naming the tool and why", e)
	}
	if e := refused["scale_deployment"]; e.Toolset != "k8s" || e.Risk != core.RiskWrite || !strings.Contains(e.Detail, "loaded read-only") {
		t.Errorf("refused scale_deployment = %+v, want toolset k8s, risk write, and why", e)
	}
}
