package mcpfake

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Call is one call that reached a tool handler of the fixture.
type Call struct {
	Tool string
	// Args are the arguments as the handler decoded them: numbers are
	// float64, as encoding/json decodes them.
	Args map[string]any
	// Cancelled: the request was cancelled while the handler ran
	// (slow_check and hang only; the other tools return at once).
	Cancelled bool
}

// Fixture is one fake MCP server and the record of the calls it served. It
// is safe for concurrent use; any number of clients, over any transport, may
// use one fixture at the same time.
type Fixture struct {
	// Server is the MCP server, for in-process clients.
	Server *server.MCPServer

	mu      sync.Mutex
	calls   []Call
	changed chan struct{} // closed and replaced whenever calls change
	running int
}

// New returns a fixture serving the tools listed in the package doc.
func New() *Fixture {
	f := &Fixture{changed: make(chan struct{})}
	f.Server = server.NewMCPServer("k8s", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithRecovery(),
	)
	f.addTools()
	return f
}

// Calls returns every call that reached a tool handler, in arrival order.
func (f *Fixture) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snapshot()
}

// WaitCalls waits until at least n calls reached a handler or timeout
// passes, and returns the calls so far either way: the caller compares.
func (f *Fixture) WaitCalls(n int, timeout time.Duration) []Call {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		if len(f.calls) >= n {
			calls := f.snapshot()
			f.mu.Unlock()
			return calls
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return f.Calls()
		}
	}
}

// Running returns how many tool handlers are executing right now; it drops
// to zero once a cancelled slow_check or hang has returned.
func (f *Fixture) Running() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running
}

// begin records the start of a call and returns its index for finish.
func (f *Fixture) begin(tool string, args map[string]any) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	args = maps.Clone(args)
	if args == nil {
		args = map[string]any{}
	}
	f.calls = append(f.calls, Call{Tool: tool, Args: args})
	f.running++
	f.notify()
	return len(f.calls) - 1
}

// finish records the end of call i.
func (f *Fixture) finish(i int, cancelled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[i].Cancelled = cancelled
	f.running--
	f.notify()
}

func (f *Fixture) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Fixture) snapshot() []Call {
	calls := slices.Clone(f.calls)
	for i := range calls {
		calls[i].Args = maps.Clone(calls[i].Args)
	}
	return calls
}
