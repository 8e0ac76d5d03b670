// Package enginetest wires opsgate's core as `opsgate serve` does — openai-go
// against the llmfake SSE server, mcp-go against an in-process Kubernetes-like
// MCP server, the SQLite store — for the engine's and the adapters' tests.
package enginetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/llm"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// Stack is everything an engine runs on. Its parts are closed at t's
// cleanup, after whatever the test registers later (such as an engine's
// shutdown), so a test stops its adapter and engine in the order it needs.
type Stack struct {
	LLM   *llmfake.Server
	K8s   *mcpfake.Fixture // the toolset "k8s"
	Tools *tools.Host
	Store *sqlite.Store
	Model *llm.Client
}

// New starts the fakes and opens the tool host (the k8s fixture, then
// extra servers) and a store in a temporary directory.
func New(t testing.TB, extra ...tools.ServerConfig) *Stack {
	t.Helper()
	return NewWithTools(t, nil, extra...)
}

// NewWithTools is New with options for the tool host, such as
// tools.WithCallTimeout (the configuration's tools.call_timeout).
func NewWithTools(t testing.TB, opts []tools.Option, extra ...tools.ServerConfig) *Stack {
	t.Helper()
	s := &Stack{LLM: llmfake.New(t), K8s: mcpfake.New()}
	servers := append([]tools.ServerConfig{{Name: "k8s", InProcess: s.K8s.Server}}, extra...)
	opts = append([]tools.Option{tools.WithLogger(coretest.Logger(t))}, opts...)
	var err error
	if s.Tools, err = tools.New(servers, opts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Tools.Close() })
	if s.Store, err = sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "opsgate.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Store.Close() })
	if s.Model, err = llm.New(s.ModelConfig()); err != nil {
		t.Fatal(err)
	}
	return s
}

// ModelConfig is Model's configuration, for a test that needs a client of
// the same fake with other settings (timeouts).
func (s *Stack) ModelConfig() llm.Config {
	return llm.Config{BaseURL: s.LLM.URL, APIKey: "test-key", Model: "test-model"}
}

// Config is the engine configuration tests start from: a system prompt,
// the read-only k8s tools loaded, and retries fast enough for tests.
func Config() core.Config {
	return core.Config{
		SystemPrompt:    "You are opsgate.",
		DefaultToolsets: []string{"k8s"},
		Retry:           core.RetryPolicy{Base: 5 * time.Millisecond},
	}
}

// Deps returns the engine's collaborators over the stack, with events sent
// to sender; a test may replace any of them (wrap the store, add memory).
func (s *Stack) Deps(t testing.TB, sender core.EventSender) core.Deps {
	return core.Deps{Model: s.Model, Tools: s.Tools, Store: s.Store, Sender: sender, Logger: coretest.Logger(t)}
}

// Engine builds an engine, failing the test on a bad configuration.
// Stopping it (Shutdown) is the caller's, in the order its adapter needs.
func Engine(t testing.TB, cfg core.Config, d core.Deps) *core.Engine {
	t.Helper()
	eng, err := core.NewEngine(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}
