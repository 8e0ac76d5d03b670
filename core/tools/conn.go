package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/opsgate/opsgate/core"
)

// discoverTimeout bounds mcp-go's server/discover probe (default 5 s).
// Servers that predate protocol 2026-07-28 answer it with "method not
// found" at once, but some never answer, and every connect to those would
// wait out the probe before falling back to initialize.
const discoverTimeout = 2 * time.Second

// conn is one live, initialized client of a server.
type conn struct {
	toolset string
	over    Annotations
	log     *slog.Logger
	client  *client.Client
	proc    *process // stdio servers only
	// server is the name the server gave in its serverInfo.
	server string

	mu       sync.Mutex
	tools    []core.Tool
	refusals []Refusal
	stale    atomic.Bool // the server said its tool list changed

	sinks sync.Map // progress token -> *progressSink

	closeOnce sync.Once
	closeErr  error
}

// dial starts, initializes and lists the tools of cfg's server. ctx bounds
// the handshake; life is the lifetime of the transport.
func dial(ctx, life context.Context, cfg ServerConfig, log *slog.Logger, names *names, schemas *schemaCache) (*conn, error) {
	c := &conn{toolset: cfg.Name, over: cfg.Annotations, log: log}
	var t transport.Interface
	switch {
	case cfg.Command != "":
		c.proc = &process{stderr: &tailBuffer{}}
		t = transport.NewStdioWithOptions(cfg.Command, envList(cfg.Env), cfg.Args,
			transport.WithCommandFunc(c.proc.command),
			transport.WithCommandLogger(log))
	case cfg.URL != "":
		ht, err := transport.NewStreamableHTTP(cfg.URL,
			transport.WithHTTPHeaders(cfg.Headers),
			transport.WithHTTPLogger(log))
		if err != nil {
			return nil, fmt.Errorf("http transport: %w", err)
		}
		t = ht
	default:
		t = transport.NewInProcessTransport(cfg.InProcess)
	}
	c.client = client.NewClient(t, client.WithDiscoverTimeout(discoverTimeout))
	// Registered before Start, which wires notifications to the handlers
	// registered so far and later.
	c.client.OnNotification(c.onNotification)

	if err := c.client.Start(life); err != nil {
		return nil, c.abort(fmt.Errorf("start: %w", err))
	}
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "opsgate", Version: version()}
	res, err := c.client.Initialize(ctx, init)
	if err != nil {
		return nil, c.abort(fmt.Errorf("initialize: %w", err))
	}
	c.server = res.ServerInfo.Name
	if err := c.list(ctx, names, schemas); err != nil {
		return nil, c.abort(fmt.Errorf("list tools: %w", err))
	}
	return c, nil
}

// abort closes a connection that failed to come up and returns err with
// the child's last words.
func (c *conn) abort(err error) error {
	_ = c.close()
	return c.withStderr(err)
}

// list fetches the tool list (all pages) and replaces the cached one and,
// in schemas, the toolset's full input schemas.
func (c *conn) list(ctx context.Context, names *names, schemas *schemaCache) error {
	c.stale.Store(false)
	res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		c.stale.Store(true)
		return err
	}
	tools := make([]core.Tool, 0, len(res.Tools))
	full := make(map[string]json.RawMessage, len(res.Tools))
	var refusals []Refusal
	for _, t := range res.Tools {
		// A nameless tool is invalid MCP and could not be called by name.
		if t.Name != "" {
			tool, schema, refused := convert(c.toolset, t, names, c.over)
			tools = append(tools, tool)
			full[t.Name] = schema
			if refused != "" {
				r := Refusal{Tool: t.Name, Glob: refused, Risk: tool.Risk, Hint: hintOf(t.Annotations)}
				refusals = append(refusals, r)
				c.log.Warn("annotations: a read glob matches a tool its server says is not read-only; it still needs approval",
					"tool", t.Name, "glob", refused, "hint", r.Hint)
			}
		}
	}
	schemas.setListed(c.toolset, full)
	c.mu.Lock()
	c.tools, c.refusals = tools, refusals
	c.mu.Unlock()
	return nil
}

// refused returns the tools of the last listing that a read glob matched
// but could not loosen.
func (c *conn) refused() []Refusal {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.refusals)
}

// cached returns a copy of the tool list.
func (c *conn) cached() []core.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
}

// call calls the remote tool; progress (optional) receives the progress
// notifications sent with token until call returns.
func (c *conn) call(ctx context.Context, remote string, args json.RawMessage, progress func(core.Progress), token string) (*mcp.CallToolResult, error) {
	var req mcp.CallToolRequest
	req.Params.Name = remote
	req.Params.Arguments = args
	if progress != nil {
		sink := &progressSink{fn: progress}
		c.sinks.Store(token, sink)
		defer func() {
			c.sinks.Delete(token)
			sink.stop()
		}()
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	return c.client.CallTool(ctx, req)
}

func (c *conn) onNotification(n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationProgress):
		f := n.Params.AdditionalFields
		s, ok := c.sinks.Load(fmt.Sprint(f["progressToken"]))
		if !ok {
			return
		}
		msg, _ := f["message"].(string)
		s.(*progressSink).send(core.Progress{Progress: number(f["progress"]), Total: number(f["total"]), Message: msg})
	case mcp.MethodNotificationToolsListChanged:
		c.stale.Store(true)
	}
}

// close closes the client and stops the child process, once. Only a child
// that would not stop is reported: a server's exit status on the way out
// is noise.
func (c *conn) close() error {
	c.closeOnce.Do(func() {
		err := c.client.Close()
		if c.proc != nil {
			c.proc.kill()
		}
		if errors.Is(err, transport.ErrChildShutdownTimeout) {
			c.closeErr = err
		}
	})
	return c.closeErr
}

// withStderr adds the tail of a stdio child's stderr to err. Call it after
// close, when the stderr copy is complete.
func (c *conn) withStderr(err error) error {
	if c.proc == nil {
		return err
	}
	if tail := c.proc.stderr.String(); tail != "" {
		return fmt.Errorf("%w; stderr: %s", err, tail)
	}
	return err
}

// isTransportError reports whether err means the connection itself failed
// (a dead child, a refused or dropped HTTP connection, an ended session),
// rather than the server answering with an error.
func isTransportError(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed)
}

func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case json.Number:
		f, _ := n.Float64()
		return f
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return 0
}

// version is opsgate's module version for clientInfo, when the binary
// was built from a tagged module.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
