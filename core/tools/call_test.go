package tools_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

// transports returns a fresh k8s server config per transport. fixture is
// nil for stdio, whose fixture lives in the child process.
func transports(t *testing.T) map[string]func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture) {
	return map[string]func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture){
		"inprocess": func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture) {
			f := mcpfake.New()
			return tools.ServerConfig{Name: "k8s", InProcess: f.Server}, f
		},
		"http": func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture) {
			f := mcpfake.New()
			return tools.ServerConfig{Name: "k8s", URL: f.ServeHTTP(t)}, f
		},
		"stdio": func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture) {
			cfg, _ := stdioServer(t, "k8s", nil)
			return cfg, nil
		},
		// A server from before MCP 2026-07-28: the client falls back from
		// the server/discover probe to the initialize handshake.
		"stdio-legacy": func(t *testing.T) (tools.ServerConfig, *mcpfake.Fixture) {
			cfg, _ := stdioServer(t, "k8s", map[string]string{mcpfake.EnvLegacy: "1"})
			return cfg, nil
		},
	}
}

func TestCallOverTransports(t *testing.T) {
	for name, server := range transports(t) {
		t.Run(name, func(t *testing.T) {
			cfg, f := server(t)
			h := newHost(t, cfg)
			ctx := testCtx(t)

			scale := toolNamed(t, h, "k8s", "scale_deployment")
			res, err := h.Call(ctx, scale, args(t, map[string]any{"name": "web", "replicas": 3}), nil)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if want := "scaled deployment web to 3 replicas"; res.Content != want || res.IsError {
				t.Errorf("Call = %+v, want %q without error", res, want)
			}
			if f != nil {
				calls := f.Calls()
				if len(calls) != 1 || calls[0].Tool != "scale_deployment" || calls[0].Args["replicas"] != float64(3) {
					t.Errorf("fixture calls = %+v, want one scale_deployment with replicas 3", calls)
				}
			}
		})
	}
}

func TestCallToolErrorIsResult(t *testing.T) {
	for name, server := range transports(t) {
		t.Run(name, func(t *testing.T) {
			cfg, _ := server(t)
			h := newHost(t, cfg)
			pods := toolNamed(t, h, "k8s", "get_pods")
			res, err := h.Call(testCtx(t), pods, args(t, map[string]any{"namespace": "missing"}), nil)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !res.IsError || !strings.Contains(res.Content, `"missing" not found`) {
				t.Errorf("Call = %+v, want an error result saying the namespace is not found", res)
			}
		})
	}
}

func TestCallUnknownRemoteToolIsResult(t *testing.T) {
	f := mcpfake.New()
	h := newHost(t, tools.ServerConfig{Name: "k8s", InProcess: f.Server})
	ghost := core.Tool{Name: "format_disks", Toolset: "k8s", Remote: "format_disks"}
	res, err := h.Call(testCtx(t), ghost, args(t, map[string]any{}), nil)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if !res.IsError || !strings.Contains(res.Content, "format_disks") {
		t.Errorf("Call = %+v, want an error result naming the tool", res)
	}
}

func TestCallProgressReachesCallback(t *testing.T) {
	for name, server := range transports(t) {
		t.Run(name, func(t *testing.T) {
			cfg, _ := server(t)
			h := newHost(t, cfg)
			check := toolNamed(t, h, "k8s", "slow_check")

			var (
				mu  sync.Mutex
				got []core.Progress
			)
			res, err := h.Call(testCtx(t), check, args(t, map[string]any{"seconds": 0.4}), func(p core.Progress) {
				mu.Lock()
				got = append(got, p)
				mu.Unlock()
			})
			if err != nil || res.IsError {
				t.Fatalf("Call = %+v, %v", res, err)
			}
			mu.Lock()
			defer mu.Unlock()
			// Best effort: some may be lost, but not all of ~8 spaced 50 ms apart.
			if len(got) == 0 {
				t.Fatal("no progress reached the callback")
			}
			for _, p := range got {
				if p.Total != 0.4 || p.Progress < 0 || p.Progress > p.Total || !strings.Contains(p.Message, "checked") {
					t.Errorf("progress %+v, want 0..0.4 of 0.4 with a message", p)
				}
			}
		})
	}
}

func TestCallCancelReturnsPromptly(t *testing.T) {
	for name, server := range transports(t) {
		if strings.HasPrefix(name, "stdio") {
			continue // the fixture, which records the cancel, is in the child
		}
		t.Run(name, func(t *testing.T) {
			cfg, f := server(t)
			h := newHost(t, cfg)
			check := toolNamed(t, h, "k8s", "slow_check")

			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := h.Call(ctx, check, args(t, map[string]any{"seconds": 60}), nil)
				errc <- err
			}()
			if calls := f.WaitCalls(1, 10*time.Second); len(calls) != 1 {
				t.Fatalf("slow_check did not start: %+v", calls)
			}
			start := time.Now()
			cancel()
			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Call error = %v, want context.Canceled", err)
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("Call returned %v after cancel, want within 1s", d)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Call did not return after cancel")
			}

			waitIdle(t, f)
			if calls := f.Calls(); len(calls) != 1 || !calls[0].Cancelled {
				t.Errorf("fixture calls = %+v, want slow_check recorded as cancelled", calls)
			}
		})
	}
}

// A call that outlives tools.call_timeout is cancelled and answered with
// an error result; the same connection serves the next call. More calls
// hang at once than mcp-go's stdio server has workers (5): were the
// cancellations not reaching the server, the next call would queue
// behind them and time out too.
func TestCallTimeoutIsResult(t *testing.T) {
	const hung = 6
	for name, server := range transports(t) {
		t.Run(name, func(t *testing.T) {
			cfg, f := server(t)
			h, err := tools.New([]tools.ServerConfig{cfg},
				tools.WithLogger(coretest.Logger(t)), tools.WithCallTimeout(500*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			hang := toolNamed(t, h, "k8s", "hang")
			var wg sync.WaitGroup
			for range hung {
				wg.Go(func() {
					res, err := h.Call(testCtx(t), hang, args(t, map[string]any{}), nil)
					if err != nil {
						t.Errorf("Call: %v", err)
					}
					want := "timed out after 500ms (tools.call_timeout) and was cancelled; hang returned nothing"
					if !res.IsError || !strings.HasPrefix(res.Content, want) {
						t.Errorf("Call = %+v, want an error result starting %q", res, want)
					}
				})
			}
			wg.Wait()
			if f != nil {
				waitIdle(t, f)
				calls := f.Calls()
				for _, c := range calls {
					if !c.Cancelled {
						t.Errorf("fixture call %+v was not cancelled on the server", c)
					}
				}
				if len(calls) != hung {
					t.Errorf("fixture saw %d calls, want %d", len(calls), hung)
				}
			}
			// The server is fine: the next call works on the same connection.
			pods := toolNamed(t, h, "k8s", "get_pods")
			res, err := h.Call(testCtx(t), pods, args(t, map[string]any{"namespace": "prod"}), nil)
			if err != nil || res.IsError || !strings.Contains(res.Content, "pods in namespace prod") {
				t.Errorf("next Call = %+v, %v", res, err)
			}
		})
	}
}

// A server's own call_timeout overrides the host's, either way.
func TestCallTimeoutPerServer(t *testing.T) {
	short, long := mcpfake.New(), mcpfake.New()
	h, err := tools.New([]tools.ServerConfig{
		{Name: "short", InProcess: short.Server, CallTimeout: 200 * time.Millisecond},
		{Name: "long", InProcess: long.Server, CallTimeout: time.Minute},
	}, tools.WithLogger(coretest.Logger(t)), tools.WithCallTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hang := toolNamed(t, h, "short", "hang")
	res, err := h.Call(testCtx(t), hang, args(t, map[string]any{}), nil)
	if want := "timed out after 200ms (call_timeout of server short)"; err != nil || !res.IsError || !strings.HasPrefix(res.Content, want) {
		t.Errorf("Call(short hang) = %+v, %v; want an error result starting %q", res, err, want)
	}
	// Longer than the host's 100ms, within the server's minute.
	check := toolNamed(t, h, "long", "long_slow_check")
	res, err = h.Call(testCtx(t), check, args(t, map[string]any{"seconds": 0.3}), nil)
	if err != nil || res.IsError || !strings.Contains(res.Content, "all healthy") {
		t.Errorf("Call(long slow_check) = %+v, %v; want it to finish", res, err)
	}
}

// A tool that may change things and timed out may have changed them: the
// result says the outcome is unknown.
func TestCallTimeoutOfWriteToolOutcomeUnknown(t *testing.T) {
	s := server.NewMCPServer("deploy", "1.0.0")
	s.AddTool(mcp.NewTool("rollout", mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(false)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	h, err := tools.New([]tools.ServerConfig{{Name: "deploy", InProcess: s}},
		tools.WithLogger(coretest.Logger(t)), tools.WithCallTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rollout := toolNamed(t, h, "deploy", "rollout")
	if rollout.Risk != core.RiskWrite {
		t.Fatalf("rollout risk = %s, want write", rollout.Risk)
	}
	res, err := h.Call(testCtx(t), rollout, args(t, map[string]any{}), nil)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	for _, want := range []string{"timed out after 100ms", "outcome unknown: check before retrying"} {
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("Call = %+v, want an error result saying %q", res, want)
		}
	}
}

// A stop (the caller's ctx) still ends a call with a timeout at once, as
// the caller's error rather than a timeout result.
func TestCallStopPreemptsTimeout(t *testing.T) {
	f := mcpfake.New()
	h, err := tools.New([]tools.ServerConfig{{Name: "k8s", InProcess: f.Server, CallTimeout: time.Minute}},
		tools.WithLogger(coretest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hang := toolNamed(t, h, "k8s", "hang")
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, hang, args(t, map[string]any{}), nil)
		errc <- err
	}()
	f.WaitCalls(1, 10*time.Second)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Call error = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call did not return after the stop")
	}
}

func waitIdle(t *testing.T, f *mcpfake.Fixture) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.Running() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// Concurrent use of a server that is not connected yet connects it once.
func TestCallConcurrent(t *testing.T) {
	var sessions atomic.Int32
	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(func(context.Context, server.ClientSession) { sessions.Add(1) })
	s := server.NewMCPServer("k8s", "1.0.0", server.WithHooks(hooks))
	var calls atomic.Int32
	s.AddTool(mcp.NewTool("get_pods", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return mcp.NewToolResultText("ok"), nil
		})
	h := newHost(t, tools.ServerConfig{Name: "k8s", InProcess: s})
	ctx := testCtx(t)
	tool := core.Tool{Name: "get_pods", Toolset: "k8s", Remote: "get_pods"}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if i%2 == 0 {
				if _, err := h.Tools(ctx, "k8s"); err != nil {
					t.Errorf("Tools: %v", err)
				}
			}
			res, err := h.Call(ctx, tool, args(t, map[string]any{"namespace": "ns"}), nil)
			if err != nil || res.IsError {
				t.Errorf("Call %d = %+v, %v", i, res, err)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 20 {
		t.Errorf("server saw %d calls, want 20", n)
	}
	if n := sessions.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
}
