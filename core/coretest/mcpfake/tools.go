package mcpfake

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// progressInterval spaces slow_check's progress notifications: over
// streamable HTTP, notifications sent back to back are sometimes lost.
const progressInterval = 50 * time.Millisecond

func (f *Fixture) addTools() {
	read := []mcp.ToolOption{
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}
	f.Server.AddTool(mcp.NewTool("get_pods", append([]mcp.ToolOption{
		mcp.WithDescription("List the pods of a namespace with their status."),
		mcp.WithString("namespace", mcp.Required(), mcp.Description("Kubernetes namespace")),
	}, read...)...), f.getPods)

	f.Server.AddTool(mcp.NewTool("get_logs", append([]mcp.ToolOption{
		mcp.WithDescription("Show the last log lines of a pod."),
		mcp.WithString("pod", mcp.Required(), mcp.Description("Pod name")),
		mcp.WithInteger("tail", mcp.Description("Number of lines (default 10)"), mcp.Min(1)),
	}, read...)...), f.getLogs)

	f.Server.AddTool(mcp.NewTool("scale_deployment",
		mcp.WithDescription("Set the number of replicas of a deployment."),
		mcp.WithString("name", mcp.Required(), mcp.Description("Deployment name")),
		mcp.WithInteger("replicas", mcp.Required(), mcp.Min(0), mcp.Description("Desired replicas")),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), f.scaleDeployment)

	f.Server.AddTool(mcp.NewTool("delete_namespace",
		mcp.WithDescription("Delete a namespace and everything in it."),
		mcp.WithString("namespace", mcp.Required(), mcp.Description("Kubernetes namespace")),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(true),
	), f.deleteNamespace)

	// Built by hand: mcp.NewTool would preset every hint, and this tool
	// stands for servers that send no annotations at all.
	f.Server.AddTool(mcp.Tool{
		Name:        "restart_pod",
		Description: "Restart a pod by deleting it so that its controller recreates it.",
		InputSchema: mcp.ToolInputSchema{
			Type: "object",
			Properties: map[string]any{
				"pod": map[string]any{"type": "string", "description": "Pod name"},
			},
			Required: []string{"pod"},
		},
	}, f.restartPod)

	f.Server.AddTool(mcp.NewTool("slow_check", append([]mcp.ToolOption{
		mcp.WithDescription("Run a slow health check, reporting progress, for the given number of seconds."),
		mcp.WithNumber("seconds", mcp.Description("Duration in seconds (default 1)"), mcp.Min(0)),
	}, read...)...), f.slowCheck)

	f.Server.AddTool(mcp.NewTool("drain_node",
		mcp.WithDescription("Cordon a node and evict its pods, taking the given number of seconds."),
		mcp.WithString("node", mcp.Required(), mcp.Description("Node name")),
		mcp.WithNumber("seconds", mcp.Description("Duration in seconds (default 1)"), mcp.Min(0)),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), f.drainNode)

	f.Server.AddTool(mcp.NewTool("hang", append([]mcp.ToolOption{
		mcp.WithDescription("Wait for a condition that never comes: returns only when the request is cancelled."),
	}, read...)...), f.hang)
}

func (f *Fixture) getPods(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	defer f.finish(f.begin("get_pods", req.GetArguments()), false)
	ns, err := req.RequireString("namespace")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if ns == "missing" {
		return mcp.NewToolResultError(fmt.Sprintf("namespaces %q not found", ns)), nil
	}
	return mcp.NewToolResultText(fmt.Sprintf("pods in namespace %s: web-7d4b9 Running, worker-5f6c2 Running", ns)), nil
}

func (f *Fixture) getLogs(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	defer f.finish(f.begin("get_logs", req.GetArguments()), false)
	pod, err := req.RequireString("pod")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	tail := min(req.GetInt("tail", 10), 5000)
	var b strings.Builder
	fmt.Fprintf(&b, "last %d log lines of pod %s:", tail, pod)
	for i := range tail {
		fmt.Fprintf(&b, "\n2026-11-24T03:%02d:%02dZ INFO GET /healthz 200 %dms", i/60%60, i%60, 3+i%17)
	}
	return mcp.NewToolResultText(b.String()), nil
}

func (f *Fixture) scaleDeployment(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	defer f.finish(f.begin("scale_deployment", req.GetArguments()), false)
	name, err := req.RequireString("name")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	replicas, err := req.RequireInt("replicas")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(fmt.Sprintf("scaled deployment %s to %d replicas", name, replicas)), nil
}

func (f *Fixture) deleteNamespace(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	defer f.finish(f.begin("delete_namespace", req.GetArguments()), false)
	ns, err := req.RequireString("namespace")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(fmt.Sprintf("deleted namespace %s", ns)), nil
}

func (f *Fixture) restartPod(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	defer f.finish(f.begin("restart_pod", req.GetArguments()), false)
	pod, err := req.RequireString("pod")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(fmt.Sprintf("restarted pod %s", pod)), nil
}

func (f *Fixture) slowCheck(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	i := f.begin("slow_check", req.GetArguments())
	seconds := req.GetFloat("seconds", 1)
	total := time.Duration(seconds * float64(time.Second))
	start := time.Now()
	done := time.NewTimer(total)
	defer done.Stop()
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()

	f.progress(ctx, req, 0, seconds)
	for {
		select {
		case <-ctx.Done():
			f.finish(i, true)
			return nil, ctx.Err()
		case <-done.C:
			f.finish(i, false)
			return mcp.NewToolResultText(fmt.Sprintf("check finished after %g seconds: all healthy", seconds)), nil
		case <-tick.C:
			f.progress(ctx, req, min(time.Since(start).Seconds(), seconds), seconds)
		}
	}
}

// drainNode is a write that takes a while: the call is recorded when it
// starts, so a test can tell that it began even if its caller dies.
func (f *Fixture) drainNode(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	i := f.begin("drain_node", req.GetArguments())
	node := req.GetString("node", "")
	done := time.NewTimer(time.Duration(req.GetFloat("seconds", 1) * float64(time.Second)))
	defer done.Stop()
	select {
	case <-ctx.Done():
		f.finish(i, true)
		return nil, ctx.Err()
	case <-done.C:
		f.finish(i, false)
		return mcp.NewToolResultText(fmt.Sprintf("node %s drained", node)), nil
	}
}

// hang stands for a tool stuck on something that never answers: only the
// request's cancellation (a client timeout, a stop) ends it.
func (f *Fixture) hang(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	i := f.begin("hang", req.GetArguments())
	<-ctx.Done()
	f.finish(i, true)
	return nil, ctx.Err()
}

// progress sends a progress notification when the request asked for them.
// Meta is nil when the client sent no _meta at all.
func (f *Fixture) progress(ctx context.Context, req mcp.CallToolRequest, done, total float64) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return
	}
	_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
		"progressToken": req.Params.Meta.ProgressToken,
		"progress":      done,
		"total":         total,
		"message":       fmt.Sprintf("checked %.1fs of %gs", done, total),
	})
}
