package mcpfake

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// RealisticServer is one toolset of the realistic fixture.
type RealisticServer struct {
	Name   string
	Server *server.MCPServer
}

// Realistic returns four MCP servers with 60 tools between them, shaped like
// the servers opsgate users run: kubernetes-mcp-server ("k8s", 17 tools),
// a Helm server ("helm", 14), an Argo Rollouts server ("argo", 15) and a
// Jenkins server ("jenkins", 14). Names, descriptions and input schemas are
// written the way those servers write them — full sentences, examples in
// property descriptions, enums and defaults — because what they cost in
// tokens is what the benchmarks measure.
//
// Annotations follow the approval classes: reads are readOnlyHint true and
// destructiveHint false, writes readOnlyHint false and destructiveHint
// false, deletions (and exec) destructiveHint true. Every tool answers with
// deterministic text shaped like the real tool's output; calls are not
// recorded.
func Realistic() []RealisticServer {
	return []RealisticServer{
		{Name: "k8s", Server: realisticServer("k8s", k8sTools())},
		{Name: "helm", Server: realisticServer("helm", helmTools())},
		{Name: "argo", Server: realisticServer("argo", argoTools())},
		{Name: "jenkins", Server: realisticServer("jenkins", jenkinsTools())},
	}
}

func realisticServer(name string, tools []mcp.Tool) *server.MCPServer {
	s := server.NewMCPServer(name, "1.0.0", server.WithToolCapabilities(false), server.WithRecovery())
	for _, t := range tools {
		s.AddTool(t, answer)
	}
	return s
}

// answer returns the tool's canned output, or a one-line acknowledgement
// naming the arguments for tools without one.
func answer(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	if out, ok := outputs[req.Params.Name]; ok {
		return mcp.NewToolResultText(out(args)), nil
	}
	b, _ := json.Marshal(args)
	return mcp.NewToolResultText(fmt.Sprintf("%s: done (%s)", req.Params.Name, b)), nil
}

// The three approval classes. mcp.NewTool presets destructiveHint true, so
// reads and writes set it false explicitly.

func readTool(name, desc string, props ...mcp.ToolOption) mcp.Tool {
	return mcp.NewTool(name, append([]mcp.ToolOption{
		mcp.WithDescription(desc),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(true),
	}, props...)...)
}

func writeTool(name, desc string, props ...mcp.ToolOption) mcp.Tool {
	return mcp.NewTool(name, append([]mcp.ToolOption{
		mcp.WithDescription(desc),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(true),
	}, props...)...)
}

func destructiveTool(name, desc string, props ...mcp.ToolOption) mcp.Tool {
	return mcp.NewTool(name, append([]mcp.ToolOption{
		mcp.WithDescription(desc),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(true),
	}, props...)...)
}

// Property helpers: every property carries a description, as real servers'
// do.

func str(name, desc string, opts ...mcp.PropertyOption) mcp.ToolOption {
	return mcp.WithString(name, append([]mcp.PropertyOption{mcp.Description(desc)}, opts...)...)
}

func integer(name, desc string, opts ...mcp.PropertyOption) mcp.ToolOption {
	return mcp.WithInteger(name, append([]mcp.PropertyOption{mcp.Description(desc)}, opts...)...)
}

func boolean(name, desc string, opts ...mcp.PropertyOption) mcp.ToolOption {
	return mcp.WithBoolean(name, append([]mcp.PropertyOption{mcp.Description(desc)}, opts...)...)
}

func object(name, desc string, opts ...mcp.PropertyOption) mcp.ToolOption {
	return mcp.WithObject(name, append([]mcp.PropertyOption{mcp.Description(desc)}, opts...)...)
}

func argString(args map[string]any, key, def string) string {
	if s, ok := args[key].(string); ok && s != "" {
		return s
	}
	return def
}
