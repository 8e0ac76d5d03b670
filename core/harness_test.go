package core_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/llm"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// The engine acceptance tests run the whole stack through public surfaces:
// an OpenAI-compatible SSE server, the openai-go client, real in-process MCP
// servers behind mcp-go, and the SQLite store.

const conv = "terminal:alice"

var (
	alice = core.Actor{ID: "alice", Name: "Alice"}
	bob   = core.Actor{ID: "bob", Name: "Bob"}
)

type harness struct {
	t      *testing.T
	llm    *llmfake.Server
	k8s    *mcpfake.Fixture
	host   *tools.Host
	store  *sqlite.Store
	rec    *coretest.Recorder
	eng    *core.Engine
	cfg    core.Config
	memory core.Retriever
	stack  *enginetest.Stack
	msgN   atomic.Int64
	// wrap, when set, wraps the store the engines use.
	wrap func(core.Store) core.Store
	// model, when set, changes the model client's configuration.
	model func(*llm.Config)
	// hostOpts configure the tool host.
	hostOpts []tools.Option
	// display is the engines' Deps.Display.
	display func([]core.Event, core.Event) []core.Event
	// previewer is the engines' Deps.Previewer.
	previewer core.Previewer
	// coord is the engines' Deps.Coordinator.
	coord core.Coordinator
}

type option func(*harness, *[]tools.ServerConfig)

func withConfig(f func(*core.Config)) option {
	return func(h *harness, _ *[]tools.ServerConfig) { f(&h.cfg) }
}

func withMemory(r core.Retriever) option {
	return func(h *harness, _ *[]tools.ServerConfig) {
		h.memory = r
		h.cfg.MemoryEnabled = true
	}
}

func withStoreWrapper(wrap func(core.Store) core.Store) option {
	return func(h *harness, _ *[]tools.ServerConfig) { h.wrap = wrap }
}

// withModel changes the configuration of the model client (timeouts).
func withModel(f func(*llm.Config)) option {
	return func(h *harness, _ *[]tools.ServerConfig) { h.model = f }
}

func withHostOptions(opts ...tools.Option) option {
	return func(h *harness, _ *[]tools.ServerConfig) { h.hostOpts = append(h.hostOpts, opts...) }
}

func withDisplay(f func([]core.Event, core.Event) []core.Event) option {
	return func(h *harness, _ *[]tools.ServerConfig) { h.display = f }
}

func withPreviewer(p core.Previewer) option {
	return func(h *harness, _ *[]tools.ServerConfig) { h.previewer = p }
}

func withCoordinator(c core.Coordinator) option {
	return func(h *harness, _ *[]tools.ServerConfig) { h.coord = c }
}

func withServer(sc tools.ServerConfig) option {
	return func(_ *harness, s *[]tools.ServerConfig) { *s = append(*s, sc) }
}

func newHarness(t *testing.T, opts ...option) *harness {
	t.Helper()
	h := &harness{t: t, cfg: enginetest.Config()}
	var servers []tools.ServerConfig
	for _, o := range opts {
		o(h, &servers)
	}
	h.stack = enginetest.NewWithTools(t, h.hostOpts, servers...)
	h.llm, h.k8s, h.host, h.store = h.stack.LLM, h.stack.K8s, h.stack.Tools, h.stack.Store
	if h.model != nil {
		mc := h.stack.ModelConfig()
		h.model(&mc)
		var err error
		if h.stack.Model, err = llm.New(mc); err != nil {
			t.Fatal(err)
		}
	}
	h.eng, h.rec = h.newEngine()
	return h
}

// newEngine starts another engine over the same store, model and tools, as a
// restarted (or second) opsgate process would.
func (h *harness) newEngine() (*core.Engine, *coretest.Recorder) {
	h.t.Helper()
	rec := coretest.NewRecorder()
	d := h.stack.Deps(h.t, rec)
	d.Retriever = h.memory
	d.Display = h.display
	d.Previewer = h.previewer
	d.Coordinator = h.coord
	if h.wrap != nil {
		d.Store = h.wrap(d.Store)
	}
	eng := enginetest.Engine(h.t, h.cfg, d)
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng.Shutdown(ctx)
	})
	return eng, rec
}

// say sends a user message from alice.
func (h *harness) say(text string) {
	h.t.Helper()
	h.sayAs(alice, text)
}

func (h *harness) sayAs(who core.Actor, text string) {
	h.t.Helper()
	id := fmt.Sprintf("m%d", h.msgN.Add(1))
	if err := h.eng.Handle(context.Background(), core.Inbound{ConvKey: conv, MessageID: id, User: who, Text: text}); err != nil {
		h.t.Fatal(err)
	}
}

// loadWriteTools lets the conversation use k8s write tools from the start,
// as if the model had called load_toolset with include_write_tools.
func (h *harness) loadWriteTools() {
	h.t.Helper()
	ctx := context.Background()
	c, err := h.store.Conversation(ctx, conv)
	if err != nil {
		h.t.Fatal(err)
	}
	c.Toolsets = []core.Toolset{{Name: "k8s", Write: true}}
	if err := h.store.Apply(ctx, core.Batch{Conversation: &c}); err != nil {
		h.t.Fatal(err)
	}
}

// pausedApproval waits for the n-th awaiting_approval event and returns its request.
func (h *harness) pausedApproval(rec *coretest.Recorder, n int) core.Approval {
	h.t.Helper()
	ev := rec.Wait(h.t, 10*time.Second, n, coretest.Of(core.EventToolAwaitingApproval))
	if ev.Approval == nil {
		h.t.Fatalf("tool.awaiting_approval without an approval: %+v", ev)
	}
	return *ev.Approval
}

func (h *harness) decide(id string, who core.Actor, approve bool, reason string) (core.Approval, error) {
	return h.eng.Decide(context.Background(), core.Decision{ApprovalID: id, Actor: who, Approve: approve, Reason: reason})
}

func call(id, name, args string) llmfake.ToolCall {
	return llmfake.ToolCall{ID: id, Name: name, Arguments: args}
}

func toolCalls(calls ...llmfake.ToolCall) llmfake.Reply { return llmfake.Reply{ToolCalls: calls} }

func text(s string) llmfake.Reply { return llmfake.Reply{Text: s} }

// lastToolResult returns the content of the tool message answering callID in
// the request.
func toolResult(t *testing.T, req llmfake.Request, callID string) string {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == callID {
			return m.Content
		}
	}
	t.Fatalf("request has no result for call %s: %+v", callID, req.Messages)
	return ""
}

func toolNames(req llmfake.Request) []string {
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func calledTools(f *mcpfake.Fixture) []string {
	var out []string
	for _, c := range f.Calls() {
		out = append(out, c.Tool)
	}
	return out
}

func hasType(evs []core.Event, typ core.EventType) bool {
	for _, ev := range evs {
		if ev.Type == typ {
			return true
		}
	}
	return false
}

// indexOf returns the position of the first event of typ at or after from, or -1.
func indexOf(evs []core.Event, from int, typ core.EventType) int {
	for i := from; i < len(evs); i++ {
		if evs[i].Type == typ {
			return i
		}
	}
	return -1
}

// assertOrder checks that the types appear in this order (not necessarily adjacent).
func assertOrder(t *testing.T, evs []core.Event, types ...core.EventType) {
	t.Helper()
	at := 0
	for _, typ := range types {
		i := indexOf(evs, at, typ)
		if i < 0 {
			t.Fatalf("no %s after position %d; events:\n%s", typ, at, coretest.Dump(evs))
		}
		at = i + 1
	}
}
