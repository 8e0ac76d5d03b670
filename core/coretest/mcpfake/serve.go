package mcpfake

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Environment variables read by MaybeServeStdio.
const (
	// EnvStdio set to "1" makes MaybeServeStdio serve the fixture on
	// stdin/stdout and exit.
	EnvStdio = "OPSGATE_MCPFAKE_STDIO"
	// EnvPIDFile names a file the stdio server writes its process id to
	// (replacing it atomically) before serving.
	EnvPIDFile = "OPSGATE_MCPFAKE_PIDFILE"
	// EnvFail makes the stdio server print its value on stderr and exit 1
	// instead of serving, like a server missing its configuration.
	EnvFail = "OPSGATE_MCPFAKE_FAIL"
	// EnvLegacy set to "1" makes the stdio server answer server/discover
	// with "method not found", like servers that predate MCP 2026-07-28,
	// so that clients fall back to the initialize handshake.
	EnvLegacy = "OPSGATE_MCPFAKE_LEGACY"
)

// ServeHTTP serves the fixture over streamable HTTP on 127.0.0.1 and returns
// the endpoint URL. The server is closed when the test ends.
func (f *Fixture) ServeHTTP(t testing.TB) string {
	t.Helper()
	h := server.NewStreamableHTTPServer(f.Server)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Ends listening streams first; httptest's Close waits for every
		// request, and a client's GET stream would otherwise never end.
		_ = h.Shutdown(ctx)
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + "/mcp"
}

// ServeStdio serves the fixture as a stdio MCP server on in and out until in
// ends. mcp-go keeps the stdio session in a package variable, so serve at
// most one stdio connection per process at a time.
func (f *Fixture) ServeStdio(in io.Reader, out io.Writer) error {
	s := server.NewStdioServer(f.Server)
	s.SetErrorLogger(log.New(os.Stderr, "mcpfake: ", 0))
	err := s.Listen(context.Background(), in, out)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("mcpfake: serve stdio: %w", err)
	}
	return nil
}

// MaybeServeStdio turns the current process into a stdio MCP server serving
// a new fixture when EnvStdio is "1", and exits when stdin ends; otherwise
// it returns at once. Call it first thing in TestMain (see the package doc).
func MaybeServeStdio() {
	if os.Getenv(EnvStdio) != "1" {
		return
	}
	if msg := os.Getenv(EnvFail); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
	if path := os.Getenv(EnvPIDFile); path != "" {
		if err := writePID(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	var in io.Reader = os.Stdin
	if os.Getenv(EnvLegacy) == "1" {
		in = refuseDiscover(os.Stdin, os.Stdout)
	}
	if err := New().ServeStdio(in, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// StdioChild returns how to start the running test binary as a stdio
// server of a fresh fixture: the command, its arguments and the child's
// whole environment (EnvStdio, GORACE=atexit_sleep_ms=0, then env). The
// binary's TestMain must call MaybeServeStdio; -test.run=^$ keeps one
// that does not from running its tests instead.
func StdioChild(env map[string]string) (command string, args []string, childEnv map[string]string) {
	childEnv = map[string]string{
		EnvStdio: "1",
		// A -race binary sleeps a second at exit by default; that would
		// be a second per stopped child.
		"GORACE": "atexit_sleep_ms=0",
	}
	maps.Copy(childEnv, env)
	return os.Args[0], []string{"-test.run=^$"}, childEnv
}

// writePID writes the process id through a rename, so a reader never sees a
// half-written file.
func writePID(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pid-*")
	if err != nil {
		return fmt.Errorf("mcpfake: write pid file: %w", err)
	}
	_, err = tmp.WriteString(strconv.Itoa(os.Getpid()))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("mcpfake: write pid file: %w", err)
	}
	return nil
}

// refuseDiscover passes in through, except server/discover requests, which
// it answers on out with "method not found". Writes to an *os.File are
// serialised by the runtime, so they do not interleave with the server's.
func refuseDiscover(in io.Reader, out io.Writer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadBytes('\n')
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if len(line) > 0 && json.Unmarshal(line, &msg) == nil && msg.Method == string(mcp.MethodServerDiscover) && msg.ID != nil {
				_, _ = fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"Method not found"}}`+"\n", msg.ID, mcp.METHOD_NOT_FOUND)
			} else if len(line) > 0 {
				if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}
