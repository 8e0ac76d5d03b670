package core_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
)

// argoLike is an MCP server like argocd-mcp (tools without annotations) with
// one tool that says it writes, recording which tools were called.
type argoLike struct {
	mu     sync.Mutex
	called []string
}

func (a *argoLike) server() *server.MCPServer {
	s := server.NewMCPServer("argo", "1.0.0")
	add := func(name string, ann mcp.ToolAnnotation) {
		s.AddTool(mcp.Tool{Name: name, InputSchema: mcp.ToolInputSchema{Type: "object"}, Annotations: ann},
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				a.mu.Lock()
				a.called = append(a.called, name)
				a.mu.Unlock()
				return mcp.NewToolResultText(name + ": ok"), nil
			})
	}
	add("get_application", mcp.ToolAnnotation{})                                     // claims nothing
	add("get_token_rotated", mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(false)}) // says it writes
	return s
}

func (a *argoLike) calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.called...)
}

// TestAnnotationOverridesCannotBypassApproval: a read glob runs a tool that
// claims nothing without a card, and the audit says the risk was
// configured; the same glob over a tool whose server says readOnlyHint
// false leaves it behind an approval, audited as the server's annotation.
func TestAnnotationOverridesCannotBypassApproval(t *testing.T) {
	argo := &argoLike{}
	h := newHarness(t,
		withServer(tools.ServerConfig{Name: "argo", InProcess: argo.server(),
			Annotations: tools.Annotations{Read: []string{"get_*"}}}),
		withConfig(func(c *core.Config) { c.DefaultToolsets = []string{"k8s", "argo"} }))

	h.llm.Push(toolCalls(call("c1", "get_application", `{}`)), text("guestbook is synced."))
	h.say("how is guestbook?")
	if done := h.rec.WaitCompleted(t, 1); done.Status != core.RunDone {
		t.Fatalf("run = %s, want done: a configured read needs no approval", done.Status)
	}
	if got := argo.calls(); len(got) != 1 || got[0] != "get_application" {
		t.Fatalf("calls = %v, want get_application", got)
	}
	entries, err := h.store.Audit(context.Background(), core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Kind != core.AuditExecuted || entries[0].Risk != core.RiskRead || entries[0].RiskSource != core.RiskConfigured {
		t.Fatalf("audit = %+v, want one executed read whose risk was configured", entries)
	}

	// The conversation now has argo's write tools too.
	c, err := h.store.Conversation(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	c.Toolsets = []core.Toolset{{Name: "k8s"}, {Name: "argo", Write: true}}
	if err := h.store.Apply(context.Background(), core.Batch{Conversation: &c}); err != nil {
		t.Fatal(err)
	}
	h.llm.Push(toolCalls(call("c2", "get_token_rotated", `{}`)))
	h.say("rotate the token")
	a := h.pausedApproval(h.rec, 1)
	if a.Tool != "get_token_rotated" || !a.Risk.NeedsApproval() {
		t.Fatalf("approval = %+v, want get_token_rotated asking", a)
	}
	if got := argo.calls(); len(got) != 1 {
		t.Fatalf("calls = %v: a tool its server says writes ran without approval", got)
	}
	entries, err = h.store.Audit(context.Background(), core.AuditFilter{ApprovalID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Kind != core.AuditProposed || entries[0].Risk != core.RiskWrite || entries[0].RiskSource != core.RiskFromAnnotation {
		t.Fatalf("audit = %+v, want the proposal as a write from the server's annotation", entries)
	}

	// Approved, it runs, and its execution is audited with the same source
	// (the checkpoint carries the tool as it was classified).
	h.llm.Push(text("rotated."))
	if _, err := h.decide(a.ID, alice, true, ""); err != nil {
		t.Fatal(err)
	}
	h.rec.WaitCompleted(t, 3)
	if got := argo.calls(); len(got) != 2 || got[1] != "get_token_rotated" {
		t.Fatalf("calls = %v, want get_token_rotated after the approval", got)
	}
	all := mustAudit(t, h)
	last := all[len(all)-1]
	if last.Kind != core.AuditExecuted || last.Tool != "get_token_rotated" || last.RiskSource != core.RiskFromAnnotation {
		t.Errorf("last audit entry = %+v, want get_token_rotated executed, risk from the annotation", last)
	}
	if n, brk := core.VerifyChain(all); brk != nil || n != len(all) {
		t.Errorf("VerifyChain = %d, %+v; want all %d entries verified", n, brk, len(all))
	}
}

func mustAudit(t *testing.T, h *harness) []core.AuditEntry {
	t.Helper()
	es, err := h.store.Audit(context.Background(), core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}
