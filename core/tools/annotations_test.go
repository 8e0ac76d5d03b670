package tools_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
)

// hinted is a tool with exactly the given hints (nil: not sent at all),
// unlike mcp.NewTool, which presets every hint.
func hinted(name string, readOnly, destructive *bool) mcp.Tool {
	return mcp.Tool{Name: name, InputSchema: mcp.ToolInputSchema{Type: "object"},
		Annotations: mcp.ToolAnnotation{ReadOnlyHint: readOnly, DestructiveHint: destructive}}
}

func serverOf(name string, list ...mcp.Tool) *server.MCPServer {
	s := server.NewMCPServer(name, "1.0.0")
	for _, t := range list {
		s.AddTool(t, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	}
	return s
}

type riskOf struct {
	Risk   core.Risk
	Source core.RiskSource
}

func risks(t *testing.T, h *tools.Host, toolset string) map[string]riskOf {
	t.Helper()
	list, err := h.Tools(context.Background(), toolset)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]riskOf{}
	for _, tool := range list {
		got[tool.Remote] = riskOf{tool.Risk, tool.RiskSource}
	}
	return got
}

var yes, no = mcp.ToBoolPtr(true), mcp.ToBoolPtr(false)

// TestAnnotationOverrides: read loosens only a tool whose server claims
// nothing; destructive raises any tool; each risk says where it came from.
func TestAnnotationOverrides(t *testing.T) {
	s := serverOf("argo",
		hinted("get_application", nil, nil),   // claims nothing
		hinted("get_cluster", nil, no),        // not destructive, says nothing of reads
		hinted("get_secret", no, nil),         // says it writes
		hinted("get_and_wipe", nil, yes),      // says it destroys
		hinted("get_version", yes, no),        // says it reads
		hinted("list_resources", yes, nil),    // says it reads; configured destructive
		hinted("get_then_delete", nil, nil),   // matches read and destructive
		hinted("delete_application", no, yes), // already destructive by its server
		hinted("sync_application", nil, nil),  // matched by nothing
		hinted("update_application", no, no),  // a write, matched by nothing
	)
	h := newHost(t, tools.ServerConfig{Name: "argo", InProcess: s, Annotations: tools.Annotations{
		Read:        []string{"get_*", "list_*"},
		Destructive: []string{"delete_*", "*_then_*", "list_resources"},
	}})
	want := map[string]riskOf{
		"get_application":    {core.RiskRead, core.RiskConfigured},
		"get_cluster":        {core.RiskRead, core.RiskConfigured},
		"get_secret":         {core.RiskWrite, core.RiskFromAnnotation},
		"get_and_wipe":       {core.RiskDestructive, core.RiskFromAnnotation},
		"get_version":        {core.RiskRead, core.RiskFromAnnotation},
		"list_resources":     {core.RiskDestructive, core.RiskConfigured},
		"get_then_delete":    {core.RiskDestructive, core.RiskConfigured},
		"delete_application": {core.RiskDestructive, core.RiskFromAnnotation},
		"sync_application":   {core.RiskWrite, core.RiskFromDefault},
		"update_application": {core.RiskWrite, core.RiskFromAnnotation},
	}
	if diff := cmp.Diff(want, risks(t, h, "argo")); diff != "" {
		t.Errorf("risks (-want +got):\n%s", diff)
	}

	refused, err := h.Refusals(context.Background(), "argo")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refused {
		got = append(got, r.String())
	}
	slices.Sort(got)
	wantRefused := []string{
		`get_and_wipe matches annotations.read "get_*", but its server says destructiveHint: true: it stays destructive and needs approval`,
		`get_secret matches annotations.read "get_*", but its server says readOnlyHint: false: it stays write and needs approval`,
	}
	if diff := cmp.Diff(wantRefused, got); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
}

// TestReadOverrideNeverLoosensAToolThatSaysItWrites tries a read glob
// matching everything on every combination of hints: only a tool that
// claims nothing about reading and nothing destructive is loosened, so no
// configuration can take the approval off a tool its server says writes.
func TestReadOverrideNeverLoosensAToolThatSaysItWrites(t *testing.T) {
	hints := []*bool{nil, yes, no}
	show := func(b *bool) string {
		if b == nil {
			return "absent"
		}
		return fmt.Sprint(*b)
	}
	var list []mcp.Tool
	for i, ro := range hints {
		for j, de := range hints {
			list = append(list, hinted(fmt.Sprintf("t_%d_%d", i, j), ro, de))
		}
	}
	h := newHost(t, tools.ServerConfig{Name: "any", InProcess: serverOf("any", list...),
		Annotations: tools.Annotations{Read: []string{"*"}}})
	got := risks(t, h, "any")
	for i, ro := range hints {
		for j, de := range hints {
			name := fmt.Sprintf("t_%d_%d", i, j)
			saysWrites := (ro != nil && !*ro) || (ro == nil && de != nil && *de)
			switch r := got[name]; {
			case saysWrites && !r.Risk.NeedsApproval():
				t.Errorf("readOnlyHint %s, destructiveHint %s: read glob \"*\" made it %s (%s): approval bypassed",
					show(ro), show(de), r.Risk, r.Source)
			case ro == nil && !saysWrites && (r.Risk != core.RiskRead || r.Source != core.RiskConfigured):
				t.Errorf("readOnlyHint %s, destructiveHint %s: %s (%s), want read (configured)", show(ro), show(de), r.Risk, r.Source)
			case ro != nil && *ro && (r.Risk != core.RiskRead || r.Source != core.RiskFromAnnotation):
				t.Errorf("readOnlyHint true: %s (%s), want read from the annotation", r.Risk, r.Source)
			}
		}
	}
}

// Without overrides, risks are the annotations' and say so.
func TestRiskSourceWithoutOverrides(t *testing.T) {
	h := newHost(t, tools.ServerConfig{Name: "plain", InProcess: serverOf("plain",
		hinted("reads", yes, nil), hinted("bare", nil, nil), hinted("wipes", nil, yes))})
	want := map[string]riskOf{
		"reads": {core.RiskRead, core.RiskFromAnnotation},
		"bare":  {core.RiskWrite, core.RiskFromDefault},
		"wipes": {core.RiskDestructive, core.RiskFromAnnotation},
	}
	if diff := cmp.Diff(want, risks(t, h, "plain")); diff != "" {
		t.Errorf("risks (-want +got):\n%s", diff)
	}
	if r, err := h.Refusals(context.Background(), "plain"); err != nil || len(r) != 0 {
		t.Errorf("Refusals = %v, %v; want none", r, err)
	}
}

func TestAnnotationsRejectedByNew(t *testing.T) {
	s := serverOf("x")
	for _, tt := range []struct {
		name string
		a    tools.Annotations
		want string
	}{
		{"bad glob", tools.Annotations{Read: []string{"get_[a"}}, `annotations.read[0]: "get_[a" is not a valid glob`},
		{"empty glob", tools.Annotations{Destructive: []string{"delete_*", ""}}, "annotations.destructive[1]: empty glob"},
		{"empty list", tools.Annotations{Read: []string{}}, "annotations.read is an empty list"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tools.New([]tools.ServerConfig{{Name: "x", InProcess: s, Annotations: tt.a}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestAnnotationsUnmatched(t *testing.T) {
	list := []core.Tool{{Name: "argo_get_application", Remote: "get_application"}, {Name: "sync_application", Remote: "sync_application"}}
	a := tools.Annotations{Read: []string{"get_*", "lst_*"}, Destructive: []string{"delete_*", "sync_*"}}
	want := []string{`read "lst_*"`, `destructive "delete_*"`}
	if diff := cmp.Diff(want, a.Unmatched(list)); diff != "" {
		t.Errorf("Unmatched (-want +got):\n%s", diff)
	}
}
