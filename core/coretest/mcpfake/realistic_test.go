package mcpfake_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

// TestRealisticShape checks what the benchmarks rely on: 60 tools in four
// toolsets, unique names, every tool and property described, and
// annotations that put each tool in exactly one approval class.
func TestRealisticShape(t *testing.T) {
	ctx := context.Background()
	wantCounts := map[string]int{"k8s": 17, "helm": 14, "argo": 15, "jenkins": 14}
	seen := map[string]string{}
	total := 0
	for _, rs := range mcpfake.Realistic() {
		c, err := client.NewInProcessClient(rs.Server)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		var init mcp.InitializeRequest
		init.Params.ClientInfo = mcp.Implementation{Name: "mcpfake-test", Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != wantCounts[rs.Name] {
			t.Errorf("%s: %d tools, want %d", rs.Name, len(res.Tools), wantCounts[rs.Name])
		}
		total += len(res.Tools)
		for _, tool := range res.Tools {
			if prev, dup := seen[tool.Name]; dup {
				t.Errorf("tool %s in both %s and %s", tool.Name, prev, rs.Name)
			}
			seen[tool.Name] = rs.Name
			if len(tool.Description) < 20 {
				t.Errorf("%s: description %q is not realistic", tool.Name, tool.Description)
			}
			for prop, schema := range tool.InputSchema.Properties {
				if m, _ := schema.(map[string]any); m == nil || m["description"] == "" || m["description"] == nil {
					t.Errorf("%s.%s has no description", tool.Name, prop)
				}
			}
			a := tool.Annotations
			if a.ReadOnlyHint == nil || a.DestructiveHint == nil {
				t.Errorf("%s: readOnlyHint and destructiveHint must both be set", tool.Name)
				continue
			}
			if *a.ReadOnlyHint && *a.DestructiveHint {
				t.Errorf("%s claims to be read-only and destructive", tool.Name)
			}
			deletes := strings.Contains(tool.Name, "delete") || strings.Contains(tool.Name, "uninstall") || strings.Contains(tool.Name, "remove")
			if deletes && !*a.DestructiveHint {
				t.Errorf("%s deletes but is not destructive", tool.Name)
			}
		}
		var call mcp.CallToolRequest
		call.Params.Name = res.Tools[0].Name
		call.Params.Arguments = map[string]any{"namespace": "prod"}
		out, err := c.CallTool(ctx, call)
		if err != nil || out.IsError || len(out.Content) != 1 {
			t.Errorf("%s: call %s: %+v, %v", rs.Name, call.Params.Name, out, err)
		}
	}
	if total != 60 {
		t.Errorf("%d tools, want 60", total)
	}
}
