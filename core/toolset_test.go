package core_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

func TestLoadToolset(t *testing.T) {
	helm := mcpfake.New()
	h := newHarness(t, withServer(tools.ServerConfig{Name: "helm", InProcess: helm.Server}))
	h.llm.Push(
		toolCalls(call("c1", "load_toolset", `{"toolset":"jenkins"}`), call("c2", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`)),
		text("write tools loaded"),
	)
	h.say("I need to scale things")
	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunDone {
		t.Fatalf("completed = %+v", done)
	}
	reqs := h.llm.Requests()
	first, second := toolNames(reqs[0]), toolNames(reqs[1])
	for _, name := range []string{"get_pods", "get_logs", "load_toolset"} {
		if !slices.Contains(first, name) {
			t.Errorf("first call lacks %s: %v", name, first)
		}
	}
	for _, name := range []string{"scale_deployment", "delete_namespace", "restart_pod"} {
		if slices.Contains(first, name) {
			t.Errorf("write tool %s offered before it was asked for", name)
		}
		if !slices.Contains(second, name) {
			t.Errorf("write tool %s missing after load_toolset: %v", name, second)
		}
	}
	if res := toolResult(t, reqs[1], "c1"); !strings.Contains(res, `unknown toolset "jenkins"`) || !strings.Contains(res, "helm") {
		t.Errorf("unknown toolset result = %q", res)
	}
	if hasType(h.rec.Events(), core.EventToolAwaitingApproval) {
		t.Error("load_toolset asked for approval")
	}
	if len(h.k8s.Calls())+len(helm.Calls()) != 0 {
		t.Error("load_toolset made an MCP call")
	}
}

func TestUnavailableMCPServerIsReportedByName(t *testing.T) {
	h := newHarness(t,
		withServer(tools.ServerConfig{Name: "jenkins", Command: "/nonexistent/jenkins-mcp"}),
		withConfig(func(c *core.Config) { c.DefaultToolsets = []string{"k8s", "jenkins"} }),
	)
	h.llm.Push(text("Jenkins is unavailable, so I cannot check builds."))
	h.say("did the last build pass?")
	done := h.rec.WaitCompleted(t, 1)
	if done.Status != core.RunDone {
		t.Fatalf("completed = %+v", done)
	}
	ev := h.rec.Wait(t, time.Second, 1, coretest.Of(core.EventToolError))
	if !strings.Contains(ev.Error, "jenkins") || ev.Call == nil || ev.Call.Toolset != "jenkins" {
		t.Fatalf("tool.error = %+v, want it to name the jenkins server", ev)
	}
	req := h.llm.Requests()[0]
	if sys := req.Messages[1]; sys.Role != "system" || !strings.Contains(sys.Content, `"jenkins" is unavailable`) {
		t.Errorf("the model was not told: %+v", req.Messages)
	}
	if !slices.Contains(toolNames(req), "get_pods") {
		t.Error("the working server's tools were dropped too")
	}
}
