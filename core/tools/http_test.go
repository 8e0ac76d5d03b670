package tools_test

import (
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

// serveOn serves a new fixture over streamable HTTP on addr until stop.
func serveOn(t *testing.T, addr string) (stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	srv := &http.Server{Handler: server.NewStreamableHTTPServer(mcpfake.New().Server)}
	go srv.Serve(l)
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			srv.Close()
		}
	}
	t.Cleanup(stop)
	return stop
}

// An HTTP server that goes away makes calls fail as unavailable; once it is
// back, the next use reconnects.
func TestHTTPServerRestartIsReconnected(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	stop := serveOn(t, addr)
	h := newHost(t, tools.ServerConfig{Name: "k8s", URL: "http://" + addr + "/mcp"})
	ctx := testCtx(t)
	pods := toolNamed(t, h, "k8s", "get_pods")
	if res, err := h.Call(ctx, pods, args(t, map[string]any{"namespace": "a"}), nil); err != nil || res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}

	stop()
	_, err = h.Call(ctx, pods, args(t, map[string]any{"namespace": "a"}), nil)
	var ue *core.UnavailableError
	if !errors.As(err, &ue) || ue.Server != "k8s" {
		t.Fatalf("Call with the server gone = %v, want *core.UnavailableError for k8s", err)
	}

	serveOn(t, addr)
	if res, err := h.Call(ctx, pods, args(t, map[string]any{"namespace": "b"}), nil); err != nil || res.IsError {
		t.Fatalf("Call after the server came back = %+v, %v", res, err)
	}
}
