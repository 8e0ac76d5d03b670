package tools_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

var openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolNamesCollisionPrefixed(t *testing.T) {
	a, b := mcpfake.New(), mcpfake.New()
	h := newHost(t,
		tools.ServerConfig{Name: "k8s", InProcess: a.Server},
		tools.ServerConfig{Name: "k8s-b", InProcess: b.Server})
	ctx := testCtx(t)

	first := toolNamed(t, h, "k8s", "get_pods")
	second := toolNamed(t, h, "k8s-b", "k8s-b_get_pods")
	if second.Remote != "get_pods" || second.Toolset != "k8s-b" {
		t.Errorf("prefixed tool = %+v, want remote get_pods of k8s-b", second)
	}
	res, err := h.Call(ctx, second, args(t, map[string]any{"namespace": "b"}), nil)
	if err != nil || res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	if len(a.Calls()) != 0 || len(b.Calls()) != 1 {
		t.Errorf("calls: k8s %d, k8s-b %d; want the prefixed tool to reach k8s-b only", len(a.Calls()), len(b.Calls()))
	}
	// Names stay put on a second listing.
	if again := toolNamed(t, h, "k8s", "get_pods"); again.Name != first.Name {
		t.Errorf("name changed from %s to %s", first.Name, again.Name)
	}
}

func TestToolNamesSanitizedAndReserved(t *testing.T) {
	s := server.NewMCPServer("odd", "1.0.0")
	remote := []string{
		"get.pods/v2", "get_pods_v2", "load_toolset", "memory_search", "pödstatus",
		strings.Repeat("x", 80), strings.Repeat("x", 70), "",
	}
	for i, name := range remote {
		s.AddTool(mcp.Tool{Name: name, Description: fmt.Sprintf("tool %d", i),
			InputSchema: mcp.ToolInputSchema{Type: "object"},
			Annotations: mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true)}},
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(name), nil
			})
	}
	h := newHost(t, tools.ServerConfig{Name: "odd", InProcess: s})
	list, err := h.Tools(testCtx(t), "odd")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(remote)-1 {
		t.Fatalf("got %d tools, want %d (all but the nameless one)", len(list), len(remote)-1)
	}
	seen := map[string]bool{}
	byRemote := map[string]string{}
	for _, tool := range list {
		if !openAIName.MatchString(tool.Name) {
			t.Errorf("name %q (remote %q) is not a valid function name", tool.Name, tool.Remote)
		}
		if seen[tool.Name] {
			t.Errorf("name %q given twice", tool.Name)
		}
		seen[tool.Name] = true
		byRemote[tool.Remote] = tool.Name
	}
	for remote, want := range map[string]string{
		"load_toolset":  "odd_load_toolset",
		"memory_search": "odd_memory_search",
		"pödstatus":     "p_dstatus",
	} {
		if byRemote[remote] != want {
			t.Errorf("%s is named %q, want %q", remote, byRemote[remote], want)
		}
	}
	// Calls go out under the server's own name.
	for _, tool := range list {
		res, err := h.Call(testCtx(t), tool, nil, nil)
		if err != nil || res.Content != tool.Remote {
			t.Errorf("Call(%s) = %+v, %v; want the server to see %q", tool.Name, res, err, tool.Remote)
		}
	}
}

func TestToolsPaginated(t *testing.T) {
	s := server.NewMCPServer("many", "1.0.0", server.WithPaginationLimit(2))
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("tool_%d", i)
		want = append(want, name)
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	}
	h := newHost(t, tools.ServerConfig{Name: "many", InProcess: s})
	list, err := h.Tools(testCtx(t), "many")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, names(list)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestToolsListChangedRefreshes(t *testing.T) {
	s := server.NewMCPServer("live", "1.0.0", server.WithToolCapabilities(true))
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	s.AddTool(mcp.NewTool("first"), ok)
	h := newHost(t, tools.ServerConfig{Name: "live", InProcess: s})
	ctx := testCtx(t)
	if list, err := h.Tools(ctx, "live"); err != nil || len(list) != 1 {
		t.Fatalf("Tools = %v, %v", names(list), err)
	}
	s.AddTool(mcp.NewTool("second"), ok)
	var list []core.Tool
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if list, err = h.Tools(ctx, "live"); err != nil {
			t.Fatal(err)
		}
		if len(list) == 2 {
			return
		}
	}
	t.Errorf("tools after the server added one = %v, want first and second", names(list))
}

func TestNewRejectsBadConfig(t *testing.T) {
	fake := mcpfake.New().Server
	tests := map[string][]tools.ServerConfig{
		"empty name":         {{Command: "x"}},
		"name with space":    {{Name: "my server", Command: "x"}},
		"name too long":      {{Name: strings.Repeat("a", 33), Command: "x"}},
		"duplicate name":     {{Name: "a", Command: "x"}, {Name: "a", URL: "http://h/mcp"}},
		"nothing to connect": {{Name: "a"}},
		"command and url":    {{Name: "a", Command: "x", URL: "http://h/mcp"}},
		"url and in-process": {{Name: "a", URL: "http://h/mcp", InProcess: fake}},
		"relative url":       {{Name: "a", URL: "/mcp"}},
		"ftp url":            {{Name: "a", URL: "ftp://h/mcp"}},
		"env with url":       {{Name: "a", URL: "http://h/mcp", Env: map[string]string{"A": "b"}}},
		"headers with cmd":   {{Name: "a", Command: "x", Headers: map[string]string{"A": "b"}}},
		"bad env name":       {{Name: "a", Command: "x", Env: map[string]string{"A=B": "c"}}},
		"negative timeout":   {{Name: "a", Command: "x", CallTimeout: -time.Second}},
	}
	for name, servers := range tests {
		t.Run(name, func(t *testing.T) {
			if h, err := tools.New(servers); err == nil {
				h.Close()
				t.Fatalf("New(%+v) succeeded", servers)
			} else if !strings.HasPrefix(err.Error(), "tools: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}

	h, err := tools.New([]tools.ServerConfig{
		{Name: "k8s", Command: "/nonexistent/never-started"},
		{Name: "jenkins", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer x"}},
		{Name: "mem", InProcess: fake, CallTimeout: time.Minute},
	})
	if err != nil {
		t.Fatalf("New with valid servers: %v", err)
	}
	defer h.Close()
	if diff := cmp.Diff([]string{"k8s", "jenkins", "mem"}, h.Toolsets()); diff != "" {
		t.Errorf("Toolsets (-want +got):\n%s", diff)
	}
}

func TestToolsUnknownToolset(t *testing.T) {
	h := newHost(t)
	if _, err := h.Tools(testCtx(t), "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Tools(nope) = %v, want an unknown toolset error", err)
	}
}

func TestToolsLongDescriptionTrimmed(t *testing.T) {
	s := server.NewMCPServer("wordy", "1.0.0")
	s.AddTool(mcp.NewTool("explain", mcp.WithDescription(strings.Repeat("é", 5000))),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	h := newHost(t, tools.ServerConfig{Name: "wordy", InProcess: s})
	d := toolNamed(t, h, "wordy", "explain").Description
	if n := len([]rune(d)); n > 1024 || n < 1000 || !strings.HasSuffix(d, "…") {
		t.Errorf("description has %d characters (suffix %q), want it cut to at most 1024 with an ellipsis", n, d[len(d)-3:])
	}
}
