//go:build unix

package tools_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/tools"
)

func TestUnavailableCommandNotFound(t *testing.T) {
	h := newHost(t, tools.ServerConfig{Name: "ghost", Command: "/nonexistent/opsgate-no-such-mcp-server"})
	_, err := h.Tools(testCtx(t), "ghost")
	var ue *core.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("Tools error = %v (%T), want *core.UnavailableError", err, err)
	}
	if ue.Server != "ghost" || !strings.Contains(err.Error(), `"ghost"`) {
		t.Errorf("error = %v, want it to name server ghost", err)
	}
	tool := core.Tool{Name: "x", Toolset: "ghost", Remote: "x"}
	if _, err := h.Call(testCtx(t), tool, nil, nil); !errors.As(err, &ue) {
		t.Errorf("Call error = %v, want *core.UnavailableError", err)
	}
}

// A server that exits at start says why on stderr; that text reaches the
// user through the error.
func TestUnavailableStartFailureShowsStderr(t *testing.T) {
	cfg, _ := stdioServer(t, "k8s", map[string]string{mcpfake.EnvFail: "error: KUBECONFIG /etc/nope: no such file"})
	h := newHost(t, cfg)
	_, err := h.Tools(testCtx(t), "k8s")
	var ue *core.UnavailableError
	if !errors.As(err, &ue) || ue.Server != "k8s" {
		t.Fatalf("Tools error = %v, want *core.UnavailableError for k8s", err)
	}
	if !strings.Contains(err.Error(), "KUBECONFIG /etc/nope: no such file") {
		t.Errorf("error = %v, want the child's stderr in it", err)
	}
}

func TestUnavailableHTTPRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h := newHost(t, tools.ServerConfig{Name: "jenkins", URL: "http://" + addr + "/mcp"})
	_, err = h.Tools(testCtx(t), "jenkins")
	var ue *core.UnavailableError
	if !errors.As(err, &ue) || ue.Server != "jenkins" {
		t.Fatalf("Tools error = %v, want *core.UnavailableError for jenkins", err)
	}
}

func TestStdioKilledIsRestarted(t *testing.T) {
	cfg, pidFile := stdioServer(t, "k8s", nil)
	h := newHost(t, cfg)
	ctx := testCtx(t)
	pods := toolNamed(t, h, "k8s", "get_pods")
	if res, err := h.Call(ctx, pods, args(t, map[string]any{"namespace": "prod"}), nil); err != nil || res.IsError {
		t.Fatalf("first Call = %+v, %v", res, err)
	}
	first := readPID(t, pidFile)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	_, err := h.Call(ctx, pods, args(t, map[string]any{"namespace": "prod"}), nil)
	var ue *core.UnavailableError
	if !errors.As(err, &ue) || ue.Server != "k8s" {
		t.Fatalf("Call after kill = %v, want *core.UnavailableError for k8s", err)
	}
	if !exited(first) {
		t.Errorf("killed child %d was not reaped", first)
	}

	if _, err := h.Tools(ctx, "k8s"); err != nil {
		t.Fatalf("Tools after kill: %v", err)
	}
	if second := readPID(t, pidFile); second == first {
		t.Errorf("server was not restarted (pid %d)", second)
	}
	res, err := h.Call(ctx, pods, args(t, map[string]any{"namespace": "prod"}), nil)
	if err != nil || res.Content != "pods in namespace prod: web-7d4b9 Running, worker-5f6c2 Running" {
		t.Errorf("Call after restart = %+v, %v", res, err)
	}
}

// A call in flight when the child dies fails as unavailable, promptly.
func TestStdioKilledDuringCall(t *testing.T) {
	cfg, pidFile := stdioServer(t, "k8s", nil)
	h := newHost(t, cfg)
	check := toolNamed(t, h, "k8s", "slow_check")
	started := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(testCtx(t), check, args(t, map[string]any{"seconds": 60}), func(core.Progress) {
			select {
			case started <- struct{}{}:
			default:
			}
		})
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("slow_check reported no progress")
	}
	if err := syscall.Kill(readPID(t, pidFile), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		var ue *core.UnavailableError
		if !errors.As(err, &ue) {
			t.Errorf("Call = %v, want *core.UnavailableError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call did not return after its server died")
	}
}

func TestCloseStopsChild(t *testing.T) {
	cfg, pidFile := stdioServer(t, "k8s", nil)
	h, err := tools.New([]tools.ServerConfig{cfg}, tools.WithLogger(coretest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Tools(testCtx(t), "k8s"); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, pidFile)
	if exited(pid) {
		t.Fatalf("child %d is not running before Close", pid)
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !exited(pid) {
		t.Errorf("child %d still exists after Close", pid)
	}
	if _, err := h.Tools(testCtx(t), "k8s"); err == nil {
		t.Error("Tools after Close succeeded")
	}
}

// Close while a connect is waiting for a server that never answers: the
// child is stopped before Close returns.
func TestCloseDuringConnect(t *testing.T) {
	pidFile := t.TempDir() + "/pid"
	// sh writes its pid and then never speaks MCP.
	h, err := tools.New([]tools.ServerConfig{{Name: "mute", Command: "/bin/sh",
		Args: []string{"-c", `echo $$ > "$PIDFILE"; exec sleep 600`},
		Env:  map[string]string{"PIDFILE": pidFile}}}, tools.WithLogger(coretest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := h.Tools(context.Background(), "mute")
		errc <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	var pid int
	for pid == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
			pid = readPID(t, pidFile)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if pid == 0 {
		t.Fatal("child never started")
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !exited(pid) {
		t.Errorf("child %d still exists after Close", pid)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Error("Tools succeeded against a server that never answered")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Tools did not return after Close")
	}
}

// exited reports whether pid is gone and reaped (a zombie still exists).
func exited(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// A server child gets its configured env and the basics, never opsgate's
// own secrets.
func TestStdioEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	h := newHost(t, tools.ServerConfig{Name: "env", Command: "/bin/sh",
		Args: []string{"-c", `echo "key=[$OPENAI_API_KEY] configured=[$CONFIGURED] path=[${PATH:+set}]" >&2; exit 1`},
		Env:  map[string]string{"CONFIGURED": "yes"}})
	_, err := h.Tools(testCtx(t), "env")
	if err == nil {
		t.Fatal("Tools succeeded against a server that exits")
	}
	if want := "key=[] configured=[yes] path=[set]"; !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want the child to report %q", err, want)
	}
}

// What a server starts (npx starts node) is stopped with it.
func TestCloseStopsGrandchildren(t *testing.T) {
	pidFile := t.TempDir() + "/grandchild"
	h, err := tools.New([]tools.ServerConfig{{Name: "k8s", Command: "/bin/sh",
		Args: []string{"-c", `sleep 600 </dev/null >/dev/null 2>&1 & echo $! > "$PIDFILE"; exec "$SERVER"`},
		Env: map[string]string{"PIDFILE": pidFile, "SERVER": os.Args[0],
			mcpfake.EnvStdio: "1", "GORACE": "atexit_sleep_ms=0"}}}, tools.WithLogger(coretest.Logger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Tools(testCtx(t), "k8s"); err != nil {
		t.Fatal(err)
	}
	grandchild := readPID(t, pidFile)
	if killed(grandchild) {
		t.Fatalf("grandchild %d is not running before Close", grandchild)
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Orphaned, it is reaped by whatever adopted it, if anything does (a
	// container's pid 1 may not), so a zombie counts as stopped.
	deadline := time.Now().Add(10 * time.Second)
	for !killed(grandchild) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !killed(grandchild) {
		t.Errorf("grandchild %d still exists after Close", grandchild)
		_ = syscall.Kill(grandchild, syscall.SIGKILL)
	}
}

// killed reports whether pid is gone or a zombie. Zombies are visible only
// through /proc (Linux); elsewhere this is exited.
func killed(pid int) bool {
	if exited(pid) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return exited(pid) // no /proc, or it just went away
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}
