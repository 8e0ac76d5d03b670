package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

// callTimeout stands for tools.call_timeout: short for the test, long
// enough for get_pods over stdio on a loaded machine.
const callTimeout = 500 * time.Millisecond

// Issue 9 acceptance 3: an MCP tool that never returns is cancelled after
// tools.call_timeout, the model and the user are told, and the server is
// usable afterwards.
func TestToolCallTimeoutCancelsAndServerStaysUsable(t *testing.T) {
	servers := map[string]func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture){
		"http": func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture) {
			f := mcpfake.New()
			return tools.ServerConfig{Name: "ops", URL: f.ServeHTTP(t)}, f
		},
		// The fixture lives in the child: what it saw cannot be asserted.
		"stdio": func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture) {
			cmd, args, env := mcpfake.StdioChild(nil)
			return tools.ServerConfig{Name: "ops", Command: cmd, Args: args, Env: env}, nil
		},
	}
	for name, server := range servers {
		t.Run(name, func(t *testing.T) {
			cfg, f := server(t)
			h := newHarness(t, withServer(cfg), withHostOptions(tools.WithCallTimeout(callTimeout)),
				withConfig(func(c *core.Config) { c.DefaultToolsets = []string{"ops"} }))
			h.llm.Push(
				toolCalls(call("c1", "hang", `{}`)),
				toolCalls(call("c2", "get_pods", `{"namespace":"prod"}`)),
				text("The check hung; the pods are fine."),
			)
			h.say("is prod healthy?")
			done := h.rec.WaitCompleted(t, 1)
			if done.Status != core.RunDone {
				t.Fatalf("completed = %+v, want done", done)
			}

			// The user saw the timeout.
			want := "timed out after 500ms (tools.call_timeout) and was cancelled"
			failed := h.rec.Wait(t, time.Second, 1, coretest.Of(core.EventToolError))
			if failed.Call == nil || failed.Call.ID != "c1" || !strings.HasPrefix(failed.Error, want) {
				t.Errorf("tool.error = %+v, want c1 saying %q", failed, want)
			}
			// The model was told, in the tool message of its next request.
			reqs := h.llm.Requests()
			if len(reqs) != 3 {
				t.Fatalf("model requests = %d, want 3", len(reqs))
			}
			if res := toolResult(t, reqs[1], "c1"); !strings.HasPrefix(res, want) {
				t.Errorf("tool message for c1 = %q, want it to start %q", res, want)
			}
			// The same server answered the next call.
			if res := toolResult(t, reqs[2], "c2"); !strings.Contains(res, "pods in namespace prod") {
				t.Errorf("tool message for c2 = %q, want the pods", res)
			}
			// The audit says what happened.
			audit, err := h.store.Audit(context.Background(), core.AuditFilter{RunID: done.RunID})
			if err != nil {
				t.Fatal(err)
			}
			if len(audit) != 2 || audit[0].Kind != core.AuditFailed || audit[0].Tool != "hang" ||
				!strings.HasPrefix(audit[0].Detail, "timed out after 500ms") ||
				audit[1].Kind != core.AuditExecuted || audit[1].Tool != "get_pods" {
				t.Errorf("audit = %+v, want hang failed (timed out), then get_pods executed", audit)
			}
			if f != nil {
				calls := f.WaitCalls(2, 5*time.Second)
				if len(calls) != 2 || calls[0].Tool != "hang" || !calls[0].Cancelled || calls[1].Tool != "get_pods" {
					t.Errorf("server calls = %+v, want hang cancelled, then get_pods", calls)
				}
			}
		})
	}
}
