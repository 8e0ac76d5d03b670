package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Defaults of the options.
const (
	defaultCallTimeout    = 120 * time.Second
	defaultConnectTimeout = 60 * time.Second
)

// errClosed is what Tools and Call return once Close was called.
var errClosed = errors.New("tools: host is closed")

// Host is a core.ToolHost over MCP servers. It is safe for concurrent use.
type Host struct {
	log            *slog.Logger
	callTimeout    time.Duration
	connectTimeout time.Duration

	order     []string
	upstreams map[string]*upstream
	names     *names
	schemas   *schemaCache
	tokens    atomic.Int64 // progress tokens

	// life is the lifetime of transports (a stdio child's request handling,
	// HTTP listeners); Close ends it. Request contexts must not be used for
	// that: a transport started with one would die with the first request.
	life context.Context
	stop context.CancelFunc
}

var _ core.ToolHost = (*Host)(nil)

// New checks the servers' configuration and returns a Host. It connects to
// nothing and starts no process.
func New(servers []ServerConfig, opts ...Option) (*Host, error) {
	h := &Host{
		log:            slog.Default(),
		callTimeout:    defaultCallTimeout,
		connectTimeout: defaultConnectTimeout,
		upstreams:      make(map[string]*upstream, len(servers)),
		names:          newNames(),
		schemas:        newSchemaCache(),
	}
	for _, o := range opts {
		o(h)
	}
	for i, cfg := range servers {
		if err := cfg.validate(); err != nil {
			return nil, fmt.Errorf("tools: server %d: %w", i+1, err)
		}
		if _, dup := h.upstreams[cfg.Name]; dup {
			return nil, fmt.Errorf("tools: server %d: name %q is used twice", i+1, cfg.Name)
		}
		cfg.Args, cfg.Env, cfg.Headers = slices.Clone(cfg.Args), maps.Clone(cfg.Env), maps.Clone(cfg.Headers)
		cfg.Annotations = Annotations{Read: slices.Clone(cfg.Annotations.Read), Destructive: slices.Clone(cfg.Annotations.Destructive)}
		h.order = append(h.order, cfg.Name)
		h.upstreams[cfg.Name] = newUpstream(cfg, h.log.With("toolset", cfg.Name))
	}
	h.life, h.stop = context.WithCancel(context.Background())
	return h, nil
}

// Toolsets returns the toolset names in configuration order.
func (h *Host) Toolsets() []string { return slices.Clone(h.order) }

// Tools lists the tools of toolset, connecting to its server when needed.
// The returned slice is the caller's.
func (h *Host) Tools(ctx context.Context, toolset string) ([]core.Tool, error) {
	u, ok := h.upstreams[toolset]
	if !ok {
		return nil, fmt.Errorf("tools: unknown toolset %q", toolset)
	}
	c, err := u.get(ctx, h.dialer())
	if err != nil {
		return nil, err
	}
	if !c.stale.Load() {
		return c.cached(), nil
	}
	if err := c.list(ctx, h.names, h.schemas); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tools: list tools of %s: %w", toolset, ctx.Err())
		}
		return nil, u.fail(c, fmt.Errorf("list tools: %w", err))
	}
	return c.cached(), nil
}

// Refusals lists the tools of toolset that a read glob of its server's
// annotations matches but cannot make a read, because the server says they
// are not read-only (see Annotations), as of the current tool list; it
// connects to the server like Tools.
func (h *Host) Refusals(ctx context.Context, toolset string) ([]Refusal, error) {
	if _, err := h.Tools(ctx, toolset); err != nil {
		return nil, err
	}
	c, _ := h.upstreams[toolset].current()
	if c == nil {
		return nil, nil
	}
	return c.refused(), nil
}

// Validate checks args against the tool's input schema: the full schema its
// server listed (tool.InputSchema is the compacted copy the model sees), or
// tool.InputSchema for a tool no server listed. The error text is meant for
// the model: it names what is wrong and what to do.
func (h *Host) Validate(tool core.Tool, args json.RawMessage) error {
	return h.schemas.validate(tool, args)
}

// Call runs tool with args, a JSON object. progress, when not nil, gets the
// server's progress notifications for this call; it is called from the
// transport's reader and must not block. It is never called after Call
// returns.
func (h *Host) Call(ctx context.Context, tool core.Tool, args json.RawMessage, progress func(core.Progress)) (core.ToolResult, error) {
	u, ok := h.upstreams[tool.Toolset]
	if !ok {
		return core.ToolResult{}, fmt.Errorf("tools: call %s: unknown toolset %q", tool.Name, tool.Toolset)
	}
	remote := tool.Remote
	if remote == "" {
		remote = tool.Name
	}
	obj, err := argsObject(args)
	if err != nil {
		return core.ToolResult{Content: fmt.Sprintf("%s was not called: %v", tool.Name, err), IsError: true}, nil
	}
	c, err := u.get(ctx, h.dialer())
	if err != nil {
		return core.ToolResult{}, err
	}

	limit, source := h.callTimeout, "tools.call_timeout"
	if u.cfg.CallTimeout > 0 {
		limit, source = u.cfg.CallTimeout, "call_timeout of server "+u.cfg.Name
	}
	callCtx, cancel := ctx, context.CancelFunc(func() {})
	if limit > 0 {
		callCtx, cancel = context.WithTimeout(ctx, limit)
	}
	defer cancel()
	res, err := c.call(callCtx, remote, obj, progress, fmt.Sprintf("opsgate-%d", h.tokens.Add(1)))
	switch {
	case err == nil:
		return render(res), nil
	case ctx.Err() != nil:
		return core.ToolResult{}, fmt.Errorf("tools: call %s: %w", tool.Name, ctx.Err())
	case callCtx.Err() != nil:
		// Ending callCtx cancelled the request (stdio: notifications/
		// cancelled; HTTP: the request's stream ends). The connection
		// stays: a late answer to the abandoned request is dropped.
		u.log.Warn("MCP tool call timed out and was cancelled", "tool", remote, "timeout", limit)
		return timedOut(tool, limit, source), nil
	case isTransportError(err):
		return core.ToolResult{}, u.fail(c, fmt.Errorf("call %s: %w", remote, err))
	default:
		// The server answered with a JSON-RPC error (unknown tool, invalid
		// params, a crash it recovered from): a result the model can read.
		return core.ToolResult{Content: fmt.Sprintf("%s failed: %v", tool.Name, err), IsError: true}, nil
	}
}

// Close disconnects from every server and stops the child processes. Tools
// and Call fail afterwards. It reports children that could not be stopped.
func (h *Host) Close() error {
	h.stop()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, name := range h.order {
		wg.Go(func() {
			if err := h.upstreams[name].close(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("tools: close %s: %w", name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// dialer returns the function that makes a new connection to a server.
func (h *Host) dialer() dialFunc {
	return func(ctx context.Context, u *upstream) (*conn, error) {
		// Close must be able to cut a connect short.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(h.life, cancel)()
		if h.connectTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, h.connectTimeout)
			defer cancel()
		}
		return dial(ctx, h.life, u.cfg, u.log, h.names, h.schemas)
	}
}
