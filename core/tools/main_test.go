package tools_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

// TestMain lets this test binary serve the fake MCP server over stdio when
// re-executed by a test (see mcpfake.MaybeServeStdio).
func TestMain(m *testing.M) {
	mcpfake.MaybeServeStdio()
	os.Exit(m.Run())
}

// newHost returns a host over servers, closed when the test ends.
func newHost(t *testing.T, servers ...tools.ServerConfig) *tools.Host {
	t.Helper()
	h, err := tools.New(servers, tools.WithLogger(coretest.Logger(t)))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// stdioServer configures this test binary as a stdio server named name and
// returns the file it writes its process id to.
func stdioServer(t *testing.T, name string, env map[string]string) (tools.ServerConfig, string) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	e := map[string]string{mcpfake.EnvPIDFile: pidFile}
	maps.Copy(e, env)
	cmd, args, childEnv := mcpfake.StdioChild(e)
	return tools.ServerConfig{Name: name, Command: cmd, Args: args, Env: childEnv}, pidFile
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	return pid
}

// toolNamed lists toolset and returns its tool called name.
func toolNamed(t *testing.T, h *tools.Host, toolset, name string) core.Tool {
	t.Helper()
	list, err := h.Tools(context.Background(), toolset)
	if err != nil {
		t.Fatalf("Tools(%s): %v", toolset, err)
	}
	for _, tool := range list {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("Tools(%s) has no %s; got %v", toolset, name, names(list))
	return core.Tool{}
}

func names(list []core.Tool) []string {
	var out []string
	for _, tool := range list {
		out = append(out, tool.Name)
	}
	return out
}

func args(t *testing.T, v map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testCtx is a context bounded well beyond what any test needs.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
