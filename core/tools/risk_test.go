package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

func TestToolsRiskFromAnnotations(t *testing.T) {
	f := mcpfake.New()
	h := newHost(t, tools.ServerConfig{Name: "k8s", InProcess: f.Server})
	list, err := h.Tools(context.Background(), "k8s")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]core.Risk{}
	for _, tool := range list {
		got[tool.Name] = tool.Risk
		if tool.Toolset != "k8s" || tool.Remote != tool.Name {
			t.Errorf("%s: toolset %q remote %q, want k8s and its own name", tool.Name, tool.Toolset, tool.Remote)
		}
		if tool.Description == "" {
			t.Errorf("%s: description is empty", tool.Name)
		}
	}
	want := map[string]core.Risk{
		"get_pods":         core.RiskRead,
		"get_logs":         core.RiskRead,
		"slow_check":       core.RiskRead,
		"hang":             core.RiskRead,
		"drain_node":       core.RiskWrite,
		"scale_deployment": core.RiskWrite,
		"delete_namespace": core.RiskDestructive,
		"restart_pod":      core.RiskWrite, // no annotations at all
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("risks (-want +got):\n%s", diff)
	}
}

// A server's hints only ever add caution: a tool claiming to be read-only
// and destructive at once is destructive, and so is a read-only tool built
// with mcp.NewTool's defaults (which preset destructiveHint true).
func TestToolsRiskReadOnlyHintWinsOverDestructiveHint(t *testing.T) {
	s := server.NewMCPServer("odd", "1.0.0")
	noop := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	s.AddTool(mcp.NewTool("both",
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(true)), noop)
	s.AddTool(mcp.NewTool("newtool_readonly", mcp.WithReadOnlyHintAnnotation(true)), noop)
	s.AddTool(mcp.NewTool("read_nondestructive",
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)), noop)
	s.AddTool(mcp.Tool{Name: "destructive_only", InputSchema: mcp.ToolInputSchema{Type: "object"},
		Annotations: mcp.ToolAnnotation{DestructiveHint: mcp.ToBoolPtr(true)}}, noop)
	s.AddTool(mcp.Tool{Name: "readonly_false", InputSchema: mcp.ToolInputSchema{Type: "object"},
		Annotations: mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(false)}}, noop)

	h := newHost(t, tools.ServerConfig{Name: "odd", InProcess: s})
	list, err := h.Tools(context.Background(), "odd")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]core.Risk{}
	for _, tool := range list {
		got[tool.Name] = tool.Risk
	}
	want := map[string]core.Risk{
		"both":                core.RiskRead,
		"newtool_readonly":    core.RiskRead,
		"read_nondestructive": core.RiskRead,
		"destructive_only":    core.RiskDestructive,
		"readonly_false":      core.RiskWrite,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("risks (-want +got):\n%s", diff)
	}
	for _, tool := range list {
		if tool.Risk != core.RiskRead && !tool.Risk.NeedsApproval() {
			t.Errorf("%s: risk %s does not need approval", tool.Name, tool.Risk)
		}
	}
}

func TestToolsInputSchemaIsAnObjectSchema(t *testing.T) {
	f := mcpfake.New()
	h := newHost(t, tools.ServerConfig{Name: "k8s", InProcess: f.Server})
	tool := toolNamed(t, h, "k8s", "scale_deployment")
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
		t.Fatalf("schema %s: %v", tool.InputSchema, err)
	}
	if schema.Type != "object" || len(schema.Properties) != 2 || len(schema.Required) != 2 {
		t.Errorf("schema = %s, want an object with name and replicas, both required", tool.InputSchema)
	}
	if s := tool.Schema(); s.Name != "scale_deployment" || s.Description == "" {
		t.Errorf("Schema() = %+v", s)
	}
}
