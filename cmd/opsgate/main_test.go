package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

func TestMainUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "no command", args: nil, code: exitUsage, stderr: "Usage:"},
		{name: "help", args: []string{"help"}, code: exitOK, stdout: "Commands:"},
		{name: "-h", args: []string{"-h"}, code: exitOK, stdout: "Commands:"},
		{name: "unknown command", args: []string{"deploy"}, code: exitUsage, stderr: `opsgate: unknown command "deploy"`},
		{name: "unknown flag", args: []string{"chat", "--bogus"}, code: exitUsage, stderr: "opsgate chat: flag provided but not defined: -bogus"},
		{name: "stray argument", args: []string{"doctor", "now"}, code: exitUsage, stderr: `opsgate doctor: unexpected argument "now"`},
		{name: "chat help", args: []string{"chat", "-h"}, code: exitOK, stdout: "Usage: opsgate chat [--resume | --conversation NAME] [-m TEXT]"},
		{name: "chat resume and conversation", args: []string{"chat", "--resume", "--conversation", "x"}, code: exitUsage, stderr: "opsgate chat: --resume and --conversation cannot be used together"},
		{name: "chat bad conversation name", args: []string{"chat", "--conversation", "a/b"}, code: exitUsage, stderr: `opsgate chat: --conversation: terminal: conversation name "a/b": only letters, digits, '-', '_' and '.' are allowed`},
		{name: "version", args: []string{"version"}, code: exitOK, stdout: "opsgate dev\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := Main(context.Background(), tt.args, strings.NewReader(""), &out, &errOut, testEnv())
			if code != tt.code {
				t.Errorf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out.String(), errOut.String())
			}
			if tt.stdout != "" {
				mustContain(t, "stdout", out.String(), tt.stdout)
			}
			if tt.stderr != "" {
				mustContain(t, "stderr", errOut.String(), tt.stderr)
			}
		})
	}
}

func TestMainBadLogLevel(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var errOut strings.Builder
	code := Main(context.Background(), []string{"migrate"}, strings.NewReader(""), io.Discard, &errOut, testEnv("OPSGATE_LOG_LEVEL", "loud"))
	if code != exitError || !strings.Contains(errOut.String(), `opsgate: log level "loud": want debug, info, warn or error`) {
		t.Errorf("code %d, stderr %q", code, errOut.String())
	}
}

func TestMigrate(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "")
	db := filepath.Join(dir, "data", "opsgate.db")
	for i, want := range []string{`\(created, \d+ migrations applied\), schema version [1-9]\d*\n(  applied \d{4}_\w+\n)+`,
		`\(up to date\), schema version [1-9]\d*\n`} {
		var out, errOut strings.Builder
		if code := Main(context.Background(), []string{"migrate", "--config", cfg}, nil, &out, &errOut, testEnv()); code != exitOK {
			t.Fatalf("migrate #%d: exit %d: %s", i+1, code, errOut.String())
		}
		if !regexp.MustCompile(`^store: sqlite ` + regexp.QuoteMeta(db) + ` ` + want + `$`).MatchString(out.String()) {
			t.Errorf("migrate #%d printed %q", i+1, out.String())
		}
	}
}

// Issue 20 (8g): migrate on a new PostgreSQL database says which
// migrations it applied, not "(up to date)"; a second run applies none.
func TestMigrateNamesAppliedMigrationsOnPostgres(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "")
	usePostgres(t, cfg)
	code, stdout, stderr := runMain(t, testEnv(), "migrate", "--config", cfg)
	if code != exitOK {
		t.Fatalf("migrate: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	m := regexp.MustCompile(`^store: postgres postgres://\S+ \((\d+) migrations applied\), schema version (\d+)$`).FindStringSubmatch(lines[0])
	if m == nil || m[1] != m[2] || fmt.Sprint(len(lines)-1) != m[1] || lines[1] != "  applied 0001_init" {
		t.Fatalf("migrate of a new database printed:\n%s\nwant the count and one line per migration, from 0001_init", stdout)
	}
	code, stdout, stderr = runMain(t, testEnv(), "migrate", "--config", cfg)
	if code != exitOK || !regexp.MustCompile(`^store: postgres \S+ \(up to date\), schema version \d+\n$`).MatchString(stdout) {
		t.Errorf("second migrate: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}

func TestServeHealthzAndMetrics(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut coretest.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--allow-empty", "--config", cfg}, nil, &out, &errOut, testEnv())
	}()
	addrRE := regexp.MustCompile(`msg="opsgate serving".* addr=(\S+)`)
	var base string
	for base == "" {
		select {
		case code := <-done:
			t.Fatalf("serve exited early with %d:\n%s", code, errOut.String())
		case <-time.After(10 * time.Millisecond):
		}
		if m := addrRE.FindStringSubmatch(errOut.String()); m != nil {
			base = "http://" + m[1]
		}
	}

	body, code := get(t, base+"/healthz")
	if code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz = %d %q, want 200 ok", code, body)
	}
	body, code = get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Errorf("GET /metrics = %d", code)
	}
	mustContain(t, "/metrics", body,
		"# TYPE opsgate_build_info gauge\n",
		`opsgate_build_info{goversion="go`,
		"# TYPE opsgate_runs_total counter\n",
		`opsgate_runs_total{status="done"} 0`+"\n",
		`opsgate_runs_total{status="awaiting_approval"} 0`+"\n",
		"opsgate_event_send_errors_total 0\n",
		"opsgate_active_runs 0\n",
		"opsgate_uptime_seconds ",
	)
	if _, code := get(t, base+"/nothing"); code != http.StatusNotFound {
		t.Errorf("GET /nothing = %d, want 404", code)
	}

	cancel() // as SIGTERM does
	if code := <-done; code != exitOK {
		t.Errorf("serve exit code = %d\n%s", code, errOut.String())
	}
	mustContain(t, "log", errOut.String(), "shutting down", "stopped")
}

func get(t *testing.T, url string) (string, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), resp.StatusCode
}

func TestServeListenError(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "")
	var errOut strings.Builder
	code := Main(context.Background(), []string{"serve", "--allow-empty", "--config", cfg}, nil, io.Discard, &errOut,
		testEnv("OPSGATE_SERVER_LISTEN", "256.0.0.1:80"))
	if code != exitError || !strings.Contains(errOut.String(), "opsgate: serve: server.listen: ") {
		t.Errorf("code %d, stderr:\n%s", code, errOut.String())
	}
}

func TestChatMessageFlag(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	mcp := mcpfake.New()
	cfg := writeConfig(t, dir, llm.URL, mcp.ServeHTTP(t), "")
	llm.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "get_pods", Arguments: `{"namespace":"prod"}`}}},
		llmfake.Reply{Text: "All 3 pods in prod are Running."},
	)
	var out, errOut strings.Builder
	code := Main(context.Background(), []string{"chat", "--config", cfg, "-m", "how is prod?"}, strings.NewReader(""), &out, &errOut, testEnv())
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	mustContain(t, "stdout", out.String(), "⏳ get_pods namespace=prod\n", "✅ get_pods ", "All 3 pods in prod are Running.\n")
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	first := reqs[0].Messages[0]
	if first.Role != "system" || !strings.Contains(first.Content, "You are opsgate") || !strings.Contains(first.Content, "Toolsets (one per MCP server): k8s.") {
		t.Errorf("first message is not the system prompt: %+v", first)
	}
}

func TestChatDeniesApprovalLeftUnansweredAtEOF(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	mcp := mcpfake.New()
	cfg := writeConfig(t, dir, llm.URL, mcp.ServeHTTP(t), "")
	llm.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c2", Name: "delete_namespace", Arguments: `{"namespace":"dev"}`}}},
		llmfake.Reply{Text: "Not deleted: nobody approved."},
	)
	var out, errOut strings.Builder
	code := Main(context.Background(), []string{"chat", "--config", cfg}, strings.NewReader("delete dev\n"), &out, &errOut, testEnv())
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	mustContain(t, "stdout", out.String(),
		"⚠ approval needed: delete_namespace on k8s (DESTRUCTIVE)\n",
		"approve DESTRUCTIVE delete_namespace (namespace=dev)? [y/N]\n",
		"no answer for delete_namespace: input ended, denying\n",
		"✖ delete_namespace denied by opsgate: no answer: input ended\n",
		"Not deleted: nobody approved.\n")
	mustContain(t, "stderr", errOut.String(), "opsgate: terminal: input ended with approvals unanswered (1 denied)\n")
	if calls := mcp.Calls(); len(calls) != 0 {
		t.Errorf("MCP calls = %+v, want none", calls)
	}
}

func TestChatBadConfigStartsNothing(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "tools:\n  servers:\n    - {name: sh, command: sh, args: [-c, 'touch "+marker+"']}\nsession:\n  queue_mode: later\n")
	var errOut strings.Builder
	code := Main(context.Background(), []string{"chat", "--config", cfg}, strings.NewReader("hello\n"), io.Discard, &errOut, testEnv())
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	if want := fmt.Sprintf("opsgate: config: session.queue_mode: \"later\" is not one of steer, followup, interrupt (%s line %d)\n",
		cfg, lineOf(t, cfg, "queue_mode: later")); errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
	for _, p := range []string{marker, filepath.Join(dir, "data")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: something started despite the bad configuration", p)
		}
	}
}
