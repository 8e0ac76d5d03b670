package bench

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/llm"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// systemPrompt is sized like a real deployment's prompt, so request bodies
// (and the engine's and the direct client's encoding work) are realistic.
const systemPrompt = `You are opsgate, an assistant for on-call engineers working an incident in a team chat.
Investigate with the read-only tools first and say what you looked at. Be brief: lead with the answer, then the evidence.
Never guess what a tool would return. When a change is needed, propose the exact tool call; a human approves every change.
Prefer the smallest safe change (scale, restart, roll back) and say how to undo it.`

// stackConfig says how to assemble a stack.
type stackConfig struct {
	core core.Config
	// dir is where the SQLite file goes (in a new directory under it);
	// empty means TMPDIR, on most machines a real disk, so every commit
	// pays for its fsync as in production.
	dir string
	// storeURL, when set, is the store (memory.Open) instead of a SQLite
	// file in dir.
	storeURL string
	// sender receives the engine's events; nil discards them.
	sender core.EventSender
	// display prepares events for people (core.Deps.Display), as
	// cmd/opsgate sets the redactor's; nil keeps them.
	display func([]core.Event, core.Event) []core.Event
}

// stack is the whole engine as production wires it, around the in-repo
// fakes: core/llm against llmfake, core/tools over the realistic in-process
// MCP servers, and the SQLite store.
type stack struct {
	llm     *llmfake.Server
	servers []mcpfake.RealisticServer
	host    *tools.Host
	store   *timedStore
	engine  *core.Engine
	tmp     string // removed by close
}

func newStack(cfg stackConfig) (_ *stack, err error) {
	s := &stack{llm: llmfake.NewServer(), servers: mcpfake.Realistic()}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	var servers []tools.ServerConfig
	for _, rs := range s.servers {
		servers = append(servers, tools.ServerConfig{Name: rs.Name, InProcess: rs.Server})
	}
	lg := slog.New(slog.DiscardHandler)
	if s.host, err = tools.New(servers, tools.WithLogger(lg)); err != nil {
		return nil, err
	}
	// MkdirTemp("") is the machine's TMPDIR.
	if s.tmp, err = os.MkdirTemp(cfg.dir, "opsgate-bench-"); err != nil {
		return nil, err
	}
	var st core.Store
	if cfg.storeURL != "" {
		st, err = memory.Open(context.Background(), cfg.storeURL)
	} else {
		st, err = sqlite.Open(context.Background(), filepath.Join(s.tmp, "opsgate.db"))
	}
	if err != nil {
		return nil, err
	}
	s.store = &timedStore{Store: st}
	model, err := llm.New(llm.Config{BaseURL: s.llm.URL, APIKey: "bench-key", Model: "bench-model"})
	if err != nil {
		return nil, err
	}
	ccfg := cfg.core
	if ccfg.SystemPrompt == "" {
		ccfg.SystemPrompt = systemPrompt
	}
	if ccfg.DefaultToolsets == nil {
		ccfg.DefaultToolsets = []string{"k8s"}
	}
	sender := cfg.sender
	if sender == nil {
		sender = core.SenderFunc(func(context.Context, core.Event) error { return nil })
	}
	s.engine, err = core.NewEngine(ccfg, core.Deps{Model: model, Tools: s.host, Store: s.store, Sender: sender, Logger: lg, Display: cfg.display})
	return s, err
}

// server returns the realistic MCP server of a toolset.
func (s *stack) server(name string) *mcpfake.RealisticServer {
	for i := range s.servers {
		if s.servers[i].Name == name {
			return &s.servers[i]
		}
	}
	return nil
}

// say sends text as a user message of conv and waits until the run it
// starts has ended and its events have been delivered.
func (s *stack) say(ctx context.Context, conv, text string) error {
	if err := s.handle(ctx, conv, text); err != nil {
		return err
	}
	return s.engine.Wait(ctx)
}

func (s *stack) handle(ctx context.Context, conv, text string) error {
	return s.engine.Handle(ctx, core.Inbound{
		ConvKey: conv, MessageID: newMessageID(), User: core.Actor{ID: "u1", Name: "Alice"}, Text: text,
	})
}

func (s *stack) close() {
	if s.engine != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = s.engine.Shutdown(ctx)
		cancel()
	}
	if s.host != nil {
		_ = s.host.Close()
	}
	if s.store != nil {
		_ = s.store.Close()
	}
	s.llm.Close()
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
	}
}

// lastUser returns the content of the newest user message of a request.
func lastUser(req llmfake.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}
