package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/config"
)

// tools.call_timeout bounds every server's calls; a server's own
// call_timeout replaces it for that server.
func TestNewToolsAppliesCallTimeouts(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", fmt.Sprintf(
		"tools:\n  call_timeout: 300ms\n  servers:\n    - {name: short, url: %s}\n    - {name: long, url: %s, call_timeout: 1m}\n",
		mcpfake.New().ServeHTTP(t), mcpfake.New().ServeHTTP(t)))
	cfg, err := config.Load(path, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	host, err := newTools(cfg, coretest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	res, err := host.Call(ctx, remoteTool(t, host, "short", "hang"), json.RawMessage(`{}`), nil)
	if want := "timed out after 300ms (tools.call_timeout)"; err != nil || !res.IsError || !strings.HasPrefix(res.Content, want) {
		t.Errorf("short hang = %+v, %v; want an error result starting %q", res, err, want)
	}
	res, err = host.Call(ctx, remoteTool(t, host, "long", "slow_check"), json.RawMessage(`{"seconds":0.6}`), nil)
	if err != nil || res.IsError || !strings.Contains(res.Content, "all healthy") {
		t.Errorf("long slow_check (0.6s, within its server's 1m) = %+v, %v", res, err)
	}
}

// remoteTool returns toolset's tool whose name on its server is remote.
func remoteTool(t *testing.T, host *tools.Host, toolset, remote string) core.Tool {
	t.Helper()
	list, err := host.Tools(context.Background(), toolset)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list {
		if tool.Remote == remote {
			return tool
		}
	}
	t.Fatalf("toolset %s has no %s", toolset, remote)
	return core.Tool{}
}
