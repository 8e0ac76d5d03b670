package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
)

func TestCallRendersContent(t *testing.T) {
	results := map[string]*mcp.CallToolResult{
		"texts": {Content: []mcp.Content{mcp.NewTextContent("line one"), mcp.NewTextContent("line two")}},
		"image": {Content: []mcp.Content{
			mcp.NewTextContent("dashboard:"), mcp.NewImageContent("aGVsbG8gd29ybGQh", "image/png")}},
		"resources": {Content: []mcp.Content{
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "k8s://prod/web/manifest", Text: "kind: Deployment"}),
			mcp.NewResourceLink("k8s://prod/web/events", "events", "recent events", "text/plain")}},
		"structured only":     {Content: []mcp.Content{}, StructuredContent: map[string]any{"ready": 3}},
		"structured and text": mcp.NewToolResultStructured(map[string]any{"ready": 3}, "3 pods ready"),
		"empty error":         {Content: []mcp.Content{}, IsError: true},
	}
	s := server.NewMCPServer("render", "1.0.0")
	for name, res := range results {
		s.AddTool(mcp.NewTool(strings.ReplaceAll(name, " ", "_")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return res, nil
		})
	}
	h := newHost(t, tools.ServerConfig{Name: "render", InProcess: s})

	want := map[string]core.ToolResult{
		"texts":               {Content: "line one\nline two"},
		"image":               {Content: "dashboard:\n[image image/png, 12 bytes]"},
		"resources":           {Content: "[resource k8s://prod/web/manifest]\nkind: Deployment\n[resource events: k8s://prod/web/events] recent events"},
		"structured only":     {Content: `{"ready":3}`},
		"structured and text": {Content: "3 pods ready"},
		"empty error":         {Content: "the tool failed without saying why", IsError: true},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			tool := toolNamed(t, h, "render", strings.ReplaceAll(name, " ", "_"))
			got, err := h.Call(testCtx(t), tool, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}
