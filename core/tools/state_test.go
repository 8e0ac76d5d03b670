package tools_test

import (
	"net"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/tools"
)

// States follows a server from not started, to connected, to failed when
// it goes away, and back to connected when the next use reconnects; a
// server that cannot start at all is failed with the reason.
func TestStatesFollowConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	stop := serveOn(t, addr)
	h := newHost(t,
		tools.ServerConfig{Name: "k8s", URL: "http://" + addr + "/mcp"},
		tools.ServerConfig{Name: "ghost", Command: "/nonexistent/opsgate-no-such-mcp-server"})
	ctx := testCtx(t)
	status := func() map[string]tools.ServerState {
		m := map[string]tools.ServerState{}
		for _, st := range h.States() {
			m[st.Name] = st
		}
		return m
	}
	if got := status(); got["k8s"].Status != tools.StatusNotStarted || got["ghost"].Status != tools.StatusNotStarted || !got["k8s"].Since.IsZero() {
		t.Fatalf("before any use: %+v, want both not started", got)
	}

	pods := toolNamed(t, h, "k8s", "get_pods")
	if _, err := h.Tools(ctx, "ghost"); err == nil {
		t.Fatal("ghost started")
	}
	got := status()
	if got["k8s"].Status != tools.StatusConnected || got["k8s"].Err != nil || got["k8s"].Since.IsZero() {
		t.Errorf("k8s after use = %+v, want connected", got["k8s"])
	}
	if g := got["ghost"]; g.Status != tools.StatusFailed || g.Err == nil || !strings.Contains(g.Err.Error(), "opsgate-no-such-mcp-server") {
		t.Errorf("ghost = %+v, want failed naming the command", g)
	}

	stop()
	if _, err := h.Call(ctx, pods, args(t, map[string]any{"namespace": "a"}), nil); err == nil {
		t.Fatal("call to a stopped server succeeded")
	}
	if k := status()["k8s"]; k.Status != tools.StatusFailed || k.Err == nil {
		t.Errorf("k8s after its server went away = %+v, want failed with the error", k)
	}

	serveOn(t, addr)
	if res, err := h.Call(ctx, pods, args(t, map[string]any{"namespace": "b"}), nil); err != nil || res.IsError {
		t.Fatalf("Call after the server came back = %+v, %v", res, err)
	}
	if k := status()["k8s"]; k.Status != tools.StatusConnected || k.Err != nil {
		t.Errorf("k8s after reconnecting = %+v, want connected", k)
	}

	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for name, st := range status() {
		if st.Status != tools.StatusClosed {
			t.Errorf("%s after Close = %s, want closed", name, st.Status)
		}
	}
}
