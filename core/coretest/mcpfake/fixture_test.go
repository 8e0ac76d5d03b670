package mcpfake_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

// connect returns an initialized client of f over streamable HTTP, so that
// what the tests see went over the wire.
func connect(t *testing.T, f *mcpfake.Fixture) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(f.ServeHTTP(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpfake-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

type hints struct{ ReadOnly, Destructive, Idempotent, OpenWorld *bool }

func TestToolAnnotationsOnTheWire(t *testing.T) {
	c := connect(t, mcpfake.New())
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]hints{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		got[tool.Name] = hints{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint}
	}
	yes, no := mcp.ToBoolPtr(true), mcp.ToBoolPtr(false)
	want := map[string]hints{
		"get_pods":         {yes, no, yes, no},
		"get_logs":         {yes, no, yes, no},
		"slow_check":       {yes, no, yes, no},
		"hang":             {yes, no, yes, no},
		"scale_deployment": {no, no, yes, no},
		"drain_node":       {no, no, yes, no},
		"delete_namespace": {no, yes, no, yes},
		"restart_pod":      {}, // absent, not false
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

func TestToolResultsAndCalls(t *testing.T) {
	f := mcpfake.New()
	c := connect(t, f)
	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"get_pods", map[string]any{"namespace": "prod"}, "pods in namespace prod: web-7d4b9 Running, worker-5f6c2 Running", false},
		{"get_pods", map[string]any{"namespace": "missing"}, `namespaces "missing" not found`, true},
		{"get_logs", map[string]any{"pod": "web-1", "tail": 5}, "last 5 log lines of pod web-1:\n2026-11-24T03:00:00Z INFO GET /healthz 200 3ms\n2026-11-24T03:00:01Z INFO GET /healthz 200 4ms\n2026-11-24T03:00:02Z INFO GET /healthz 200 5ms\n2026-11-24T03:00:03Z INFO GET /healthz 200 6ms\n2026-11-24T03:00:04Z INFO GET /healthz 200 7ms", false},
		{"scale_deployment", map[string]any{"name": "web", "replicas": 3}, "scaled deployment web to 3 replicas", false},
		{"delete_namespace", map[string]any{"namespace": "staging"}, "deleted namespace staging", false},
		{"restart_pod", map[string]any{"pod": "web-1"}, "restarted pod web-1", false},
		{"slow_check", map[string]any{"seconds": 0.05}, "check finished after 0.05 seconds: all healthy", false},
	}
	var wantCalls []mcpfake.Call
	for _, tt := range tests {
		var req mcp.CallToolRequest
		req.Params.Name = tt.tool
		req.Params.Arguments = tt.args
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		text := ""
		if len(res.Content) == 1 {
			if tc, ok := mcp.AsTextContent(res.Content[0]); ok {
				text = tc.Text
			}
		}
		if text != tt.want || res.IsError != tt.isError {
			t.Errorf("%s(%v) = %q (isError %v), want %q (isError %v)", tt.tool, tt.args, text, res.IsError, tt.want, tt.isError)
		}
		args := map[string]any{}
		for k, v := range tt.args {
			if n, ok := v.(int); ok {
				v = float64(n) // as JSON decodes it
			}
			args[k] = v
		}
		wantCalls = append(wantCalls, mcpfake.Call{Tool: tt.tool, Args: args})
	}
	if diff := cmp.Diff(wantCalls, f.WaitCalls(len(tests), 5*time.Second)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if n := f.Running(); n != 0 {
		t.Errorf("Running = %d after all calls returned", n)
	}
}

func TestWaitCallsTimesOut(t *testing.T) {
	f := mcpfake.New()
	start := time.Now()
	if calls := f.WaitCalls(1, 50*time.Millisecond); len(calls) != 0 {
		t.Errorf("WaitCalls = %v, want none", calls)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("WaitCalls returned after %v, before its timeout", d)
	}
}

// slow_check and hang end when their request is cancelled, and say so.
func TestBlockingToolsRecordCancel(t *testing.T) {
	for tool, args := range map[string]map[string]any{"slow_check": {"seconds": 60}, "hang": nil} {
		t.Run(tool, func(t *testing.T) {
			f := mcpfake.New()
			c := connect(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				var req mcp.CallToolRequest
				req.Params.Name = tool
				req.Params.Arguments = args
				_, _ = c.CallTool(ctx, req)
			}()
			if calls := f.WaitCalls(1, 10*time.Second); len(calls) != 1 {
				t.Fatalf("%s did not start", tool)
			}
			if n := f.Running(); n != 1 {
				t.Errorf("Running = %d while %s blocks, want 1", n, tool)
			}
			cancel()
			<-done
			deadline := time.Now().Add(10 * time.Second)
			for f.Running() > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if calls := f.Calls(); len(calls) != 1 || calls[0].Tool != tool || !calls[0].Cancelled {
				t.Errorf("calls = %+v, want %s cancelled", calls, tool)
			}
		})
	}
}
