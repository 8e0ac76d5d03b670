package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

func TestValidate(t *testing.T) {
	f := mcpfake.New()
	h := newHost(t, tools.ServerConfig{Name: "k8s", InProcess: f.Server})
	scale := toolNamed(t, h, "k8s", "scale_deployment")
	check := toolNamed(t, h, "k8s", "slow_check")
	strict := core.Tool{Name: "set_mode", Toolset: "k8s", InputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {"mode": {"type": "string", "enum": ["drain", "cordon"]}},
		"required": ["mode"],
		"additionalProperties": false}`)}

	tests := []struct {
		name string
		tool core.Tool
		args string
		want []string // substrings of the error; nil means valid
	}{
		{"valid", scale, `{"name":"web","replicas":3}`, nil},
		{"valid without optional", check, `{}`, nil},
		{"empty arguments mean no arguments", check, ``, nil},
		{"extra property allowed by schema", scale, `{"name":"web","replicas":3,"note":"x"}`, nil},
		{"wrong type", scale, `{"name":"web","replicas":"three"}`,
			[]string{"scale_deployment", "replicas", "want integer"}},
		{"missing required", scale, `{"name":"web"}`,
			[]string{"missing propert", "replicas"}},
		{"below minimum", scale, `{"name":"web","replicas":-1}`,
			[]string{"replicas", "minimum"}},
		{"bad JSON", scale, `{"name":"web",`,
			[]string{"not valid JSON", "JSON object"}},
		{"trailing garbage", scale, `{"name":"web","replicas":3} x`,
			[]string{"not valid JSON"}},
		{"not an object", scale, `["web",3]`,
			[]string{"must be a JSON object", "an array"}},
		{"extra property forbidden by schema", strict, `{"mode":"drain","force":true}`,
			[]string{"force", "not allowed"}},
		{"enum violation", strict, `{"mode":"delete"}`,
			[]string{"mode", "drain", "cordon"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := h.Validate(tt.tool, json.RawMessage(tt.args))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate(%s) = %v, want nil", tt.args, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%s) = nil, want an error", tt.args)
			}
			t.Logf("error for the model: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate(%s) = %q, want it to mention %q", tt.args, err, w)
				}
			}
		})
	}
}

// A schema that cannot be compiled must not mean "anything goes".
func TestValidateRejectsUncompilableSchema(t *testing.T) {
	h := newHost(t)
	for name, schema := range map[string]string{
		"not JSON":           `{"type":`,
		"invalid keyword":    `{"type":"object","properties":{"n":{"type":"integer","minimum":"zero"}}}`,
		"external reference": `{"type":"object","properties":{"n":{"$ref":"file:///etc/passwd"}}}`,
		"remote reference":   `{"type":"object","properties":{"n":{"$ref":"https://example.com/s.json"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			tool := core.Tool{Name: "broken", InputSchema: json.RawMessage(schema)}
			err := h.Validate(tool, json.RawMessage(`{"n":1}`))
			if err == nil || !strings.Contains(err.Error(), "broken cannot be called") {
				t.Fatalf("Validate = %v, want the call refused for its schema", err)
			}
			t.Logf("error for the model: %v", err)
			if strings.Contains(err.Error(), "root:") {
				t.Errorf("error leaks a local file: %v", err)
			}
		})
	}
}

// Servers written against JSON Schema draft 4 still validate.
func TestValidateOlderDraftSchema(t *testing.T) {
	h := newHost(t)
	tool := core.Tool{Name: "resize", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"size":{"type":"integer","minimum":0,"exclusiveMinimum":true}},"required":["size"]}`)}
	if err := h.Validate(tool, json.RawMessage(`{"size":2}`)); err != nil {
		t.Errorf("valid arguments: %v", err)
	}
	if err := h.Validate(tool, json.RawMessage(`{"size":0}`)); err == nil {
		t.Errorf("size 0 passed an exclusive minimum of 0")
	}
}

// The model sees a compacted schema; arguments are still checked against
// the full schema the server listed, so a constraint missing from what the
// model was given is enforced all the same.
func TestValidateAgainstFullSchema(t *testing.T) {
	s := server.NewMCPServer("k8s", "1.0.0")
	s.AddTool(mcp.NewTool("resources_scale",
		mcp.WithDescription("Scale a workload.   It keeps its HPA."),
		mcp.WithString("kind", mcp.Required(), mcp.Enum("Deployment", "StatefulSet"),
			mcp.Description("Kind of the workload to scale. A HorizontalPodAutoscaler targeting it may override the change, "+
				"so check for one first; DaemonSets cannot be scaled at all and are rejected by the server")),
		mcp.WithInteger("replicas", mcp.Required(), mcp.Min(1), mcp.Max(50),
			mcp.Description("Desired number of replicas (at least 1: scaling to zero is done with a separate tool that also pauses its alerts)")),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	h := newHost(t, tools.ServerConfig{Name: "k8s", InProcess: s})
	tool := toolNamed(t, h, "k8s", "resources_scale")

	if tool.Description != "Scale a workload. It keeps its HPA." {
		t.Errorf("Description = %q, want whitespace collapsed", tool.Description)
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if d, _ := schema.Properties["kind"]["description"].(string); d != "Kind of the workload to scale." {
		t.Errorf("kind description = %q, want its first sentence", d)
	}
	if d, _ := schema.Properties["replicas"]["description"].(string); utf8.RuneCountInString(d) > 64 || !strings.HasSuffix(d, "…)") {
		t.Errorf("replicas description = %q, want it cut to 64 characters", d)
	}
	if schema.Properties["kind"]["enum"] == nil || schema.Properties["replicas"]["minimum"] == nil {
		t.Errorf("compact schema %s lost a constraint the model needs", tool.InputSchema)
	}

	// What the model was given may lack constraints: validation does not
	// depend on it.
	stripped := tool
	stripped.InputSchema = json.RawMessage(`{"type":"object"}`)
	for _, tl := range []core.Tool{tool, stripped} {
		if err := h.Validate(tl, json.RawMessage(`{"kind":"Deployment","replicas":3}`)); err != nil {
			t.Errorf("valid arguments: %v", err)
		}
		for args, want := range map[string]string{
			`{"kind":"DaemonSet","replicas":3}`:   "kind",
			`{"kind":"Deployment","replicas":0}`:  "minimum",
			`{"kind":"Deployment","replicas":51}`: "maximum",
			`{"kind":"Deployment"}`:               "replicas",
		} {
			err := h.Validate(tl, json.RawMessage(args))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Validate(%s) with schema %s = %v, want an error about %s", args, tl.InputSchema, err, want)
			}
		}
	}
}
