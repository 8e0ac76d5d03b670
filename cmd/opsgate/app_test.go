package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
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

// TestModelTimeoutsFromConfig: llm.timeout and llm.stream_idle_timeout
// (here from their environment overrides) reach the model client.
func TestModelTimeoutsFromConfig(t *testing.T) {
	fake := llmfake.New(t)
	dir := t.TempDir()
	cfg, err := config.Load(writeConfig(t, dir, fake.URL, "", ""),
		testEnv("OPSGATE_LLM_TIMEOUT", "200ms", "OPSGATE_LLM_STREAM_IDLE_TIMEOUT", "300ms"))
	if err != nil {
		t.Fatal(err)
	}
	model, err := newModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := core.ModelRequest{Messages: []core.Message{{Role: core.RoleUser, Content: "hi"}}}
	for _, tt := range []struct {
		reply llmfake.Reply
		want  string
	}{
		{llmfake.Reply{Text: "never", NeverAnswer: true}, "sent no answer within 200ms (llm.timeout)"},
		{llmfake.Reply{Text: "Scaling web to five replicas", StallAfterTokens: 3}, "went silent for 300ms (llm.stream_idle_timeout) after 3 tokens"},
	} {
		fake.Push(tt.reply)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := model.Generate(ctx, req, nil)
		cancel()
		var me *core.ModelError
		if !errors.As(err, &me) || !strings.Contains(me.Message, tt.want) {
			t.Errorf("err = %v, want a model error saying %q", err, tt.want)
		}
	}
}
