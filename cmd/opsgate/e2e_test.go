package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/opsgate/opsgate/internal/pgtest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/internal/kubetest"
)

// The end-to-end tests run the real binary, built once per test process.
const e2eVersion = "v0.0.0-e2e"

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	faultParallel()
	code := pgtest.Main(m)
	kubetest.StopShared() // the Kubernetes tests' control plane, if one started
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func opsgateBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "opsgate-e2e-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "opsgate")
		cmd := exec.Command("go", "build", "-ldflags", "-X main.version="+e2eVersion, "-o", binPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// binaryCommand is opsgate with args in dir, with an environment that has
// nothing of the test process but PATH and HOME.
func binaryCommand(ctx context.Context, t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, opsgateBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "USER=sre"}
	return cmd
}

// runBinary runs opsgate with args and stdin in dir (see binaryCommand).
func runBinary(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, t, dir, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("run opsgate: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("opsgate %s did not finish:\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}

func toolCall(id, name, args string) llmfake.Reply {
	return llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// TestBinaryChatReadDeniedApprovedWrite is the acceptance scenario: a
// scripted chat over stdin in which a read tool runs without approval, a
// write tool is denied (and the model hears why), and the same write tool
// is approved and runs with exactly the approved arguments.
func TestBinaryChatReadDeniedApprovedWrite(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	mcp := mcpfake.New()
	cfg := writeConfig(t, dir, llm.URL, mcp.ServeHTTP(t), "")
	llm.Push(
		// 1: a read tool, then the answer.
		toolCall("c1", "get_pods", `{"namespace":"prod"}`),
		llmfake.Reply{Text: "There are 3 pods in prod, all Running."},
		// 2: load the write tools, ask to scale: denied.
		toolCall("c2", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		toolCall("c3", "scale_deployment", `{"name":"web","replicas":3}`),
		llmfake.Reply{Text: "Understood: web was not scaled."},
		// 3: ask again: approved.
		toolCall("c4", "scale_deployment", `{"name":"web","replicas":3}`),
		llmfake.Reply{Text: "Scaled web to 3 replicas."},
		// After three exchanges the conversation is titled.
		llmfake.Reply{Text: "Scaling web in prod"},
	)
	stdin := "list the pods in prod\nscale web to 3\nn\nscale web to 3, I am sure\ny\n"

	stdout, stderr, code := runBinary(t, dir, stdin, "chat", "--config", cfg)
	me := terminal.LocalUser(testEnv("USER", "sre")).Name // the binary runs as the same OS user
	if code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("stdout:\n%s", stdout)

	type call struct {
		Tool string
		Args map[string]any
	}
	var got []call
	for _, c := range mcp.Calls() {
		got = append(got, call{c.Tool, c.Args})
	}
	want := []call{
		{"get_pods", map[string]any{"namespace": "prod"}},
		{"scale_deployment", map[string]any{"name": "web", "replicas": 3.0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MCP calls (-want +got):\n%s", diff)
	}

	mustInOrder(t, stdout,
		"⏳ get_pods namespace=prod\n",
		"✅ get_pods ",
		"There are 3 pods in prod, all Running.\n",
		"⚠ approval needed: scale_deployment on k8s (write)\n",
		`    arguments: {"name":"web","replicas":3}`+"\n",
		"approve scale_deployment (name=web replicas=3)? [y/N]\n",
		"✖ scale_deployment denied by "+me+"\n",
		"Understood: web was not scaled.\n",
		"⚠ approval needed: scale_deployment on k8s (write)\n",
		"approve scale_deployment (name=web replicas=3)? [y/N]\n",
		"✔ scale_deployment approved by "+me+"\n",
		"⏳ scale_deployment name=web replicas=3\n",
		"✅ scale_deployment ",
		"Scaled web to 3 replicas.\n",
	)
	if strings.Contains(stdout, "\x1b[") {
		t.Errorf("stdout is not a terminal but has ANSI escapes:\n%q", stdout)
	}

	reqs := llm.Requests()
	if len(reqs) != 8 || !isTitleRequest(reqs[7]) {
		t.Fatalf("%d model requests, want 7 and the title request", len(reqs))
	}
	// The model heard about the denial in the request after it.
	last := reqs[4].Messages[len(reqs[4].Messages)-1]
	if last.Role != "tool" || last.ToolCallID != "c3" || !strings.Contains(last.Content, "denied by "+me) {
		t.Errorf("request 5 ends with %+v, want the denial of c3", last)
	}
}

// mustInOrder checks that the wants appear in s in this order.
func mustInOrder(t *testing.T, s string, wants ...string) {
	t.Helper()
	coretest.MustInOrder(t, s, wants...)
}

func TestBinaryDoctorReportsServerThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	mcp := mcpfake.New()
	missing := filepath.Join(dir, "no-such-mcp-server")
	cfg := writeConfig(t, dir, llm.URL, mcp.ServeHTTP(t), "    - name: broken\n      command: "+missing+"\n"+
		"telegram:\n  token: \"123456:doctor\"\n")

	stdout, stderr, code := runBinary(t, dir, "", "doctor", "--config", cfg)
	if code == 0 {
		t.Fatalf("doctor exited 0 with a broken server\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	mustInOrder(t, stdout,
		"opsgate "+e2eVersion+" doctor\n",
		"ok    config  "+cfg+"\n",
		"ok    llm     fake-model at "+llm.URL+"\n",
		"ok    tools   k8s: 8 tools, 4 need approval",
		"delete_namespace             destructive (needs approval)\n",
		"get_pods                     read\n",
		"scale_deployment             write (needs approval)\n",
		"FAIL  tools   broken: cannot start or reach the server: ",
		"fix: install \""+missing+"\" or correct tools.servers[1].command",
		"ok    store   sqlite ",
		"1 problem(s) found\n",
	)
}

func TestBinaryVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} {
		stdout, _, code := runBinary(t, t.TempDir(), "", arg)
		if code != 0 || stdout != "opsgate "+e2eVersion+"\n" {
			t.Errorf("%s: exit %d, stdout %q", arg, code, stdout)
		}
	}
}

func TestBinaryBadConfigStartsNothing(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "",
		"tools:\n  servers:\n    - {name: sh, command: sh, args: [-c, 'touch "+marker+"']}\n  default_toolsets: [sh, helm]\n")
	for _, cmd := range []string{"chat", "serve", "migrate"} {
		stdout, stderr, code := runBinary(t, dir, "hello\n", cmd, "--config", cfg)
		want := fmt.Sprintf("opsgate: config: tools.default_toolsets[1]: \"helm\" is not the name of a server in tools.servers (%s line %d)\n",
			cfg, lineOf(t, cfg, "default_toolsets: [sh, helm]"))
		if code != 1 || stderr != want || stdout != "" {
			t.Errorf("%s: exit %d\nstdout %q\nstderr %q\nwant   %q", cmd, code, stdout, stderr, want)
		}
	}
	for _, p := range []string{marker, filepath.Join(dir, "data")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: something started despite the bad configuration", p)
		}
	}
}

// In piped mode, Ctrl-C (SIGINT) ends the session like SIGTERM: the run is
// stopped, the approval it waits for is cancelled (and never runs), and the
// exit code is the shell's 130. The README describes this.
func TestBinaryChatPipedSIGINT(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	mcp := mcpfake.New()
	cfg := writeConfig(t, dir, llm.URL, mcp.ServeHTTP(t), "")
	llm.Push(
		toolCall("c1", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		toolCall("c2", "delete_namespace", `{"namespace":"dev"}`),
		llmfake.Reply{Text: "Not deleted."},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, t, dir, "chat", "--config", cfg)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var out, errOut coretest.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, "delete dev\n"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(out.String(), "[y/N]") {
		if ctx.Err() != nil {
			t.Fatalf("no approval question:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("opsgate chat after SIGINT: %v, want exit code %d\nstdout:\n%s\nstderr:\n%s", err, exitInterrupted, out.String(), errOut.String())
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	mustInOrder(t, out.String(), "approve DESTRUCTIVE delete_namespace (namespace=dev)? [y/N]\n", "✖ delete_namespace: cancelled\n")
	if calls := mcp.Calls(); len(calls) != 0 {
		t.Errorf("MCP calls = %+v, want none", calls)
	}
}

// Issue 20 (8h): an approval cancelled because chat was ended by SIGTERM
// is audited as cancelled by opsgate itself (core.SystemActor), not by
// nobody ("-"), and says why.
func TestBinaryChatSIGTERMAuditsTheCancelAsSystem(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	mcp := mcpfake.New()
	cfg := writeConfig(t, dir, llm.URL, mcp.ServeHTTP(t), "")
	llm.Push(
		toolCall("c1", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		toolCall("c2", "delete_namespace", `{"namespace":"dev"}`),
		llmfake.Reply{Text: "Not deleted."},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, t, dir, "chat", "--config", cfg)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var out, errOut coretest.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, "delete dev\n"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(out.String(), "[y/N]") {
		if ctx.Err() != nil {
			t.Fatalf("no approval question:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	stdout, stderr, code := runBinary(t, dir, "", "audit", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("audit: exit %d: %s", code, stderr)
	}
	var cancelled []core.AuditEntry
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e core.AuditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if e.Kind == core.AuditCancelled {
			cancelled = append(cancelled, e)
		}
	}
	if len(cancelled) != 1 || cancelled[0].Actor != core.SystemActor || !strings.Contains(cancelled[0].Detail, "opsgate was stopped") {
		t.Fatalf("cancelled entries = %+v, want one by %+v saying opsgate was stopped\naudit:\n%s", cancelled, core.SystemActor, stdout)
	}
}

// Issue 20 (8e): a misspelt OPSGATE_ variable, which nothing reads, is
// warned about at the start of serve, chat and doctor, with the variable
// meant; the real binary reads its real environment.
func TestBinaryWarnsAboutMisspeltVariables(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	cfg := writeConfig(t, dir, llm.URL, "", "")
	const want = "OPSGATE_LLM_BASEURL is set, but opsgate reads no such variable; did you mean OPSGATE_LLM_BASE_URL?"
	run := func(stdin string, args ...string) (stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := binaryCommand(ctx, t, dir, args...)
		cmd.Env = append(cmd.Env, "OPSGATE_LLM_BASEURL=http://elsewhere/v1", "OPSGATE_TOKEN=og_not-a-mistake")
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		_ = cmd.Run()
		return out.String(), errOut.String()
	}
	stdout, _ := run("", "doctor", "--config", cfg)
	mustContain(t, "doctor", stdout, "warn  config  "+want+"\n")
	llm.Push(llmfake.Reply{Text: "Hello."})
	stdout, stderr := run("", "chat", "-m", "hi", "--config", cfg)
	mustContain(t, "chat's stdout", stdout, "Hello.")
	mustContain(t, "chat's stderr", stderr, "level=WARN msg=\""+want+"\"")
	_, stderr = run("", "serve", "--config", cfg) // nothing to serve: it warns, then refuses
	mustContain(t, "serve's stderr", stderr, "level=WARN msg=\""+want+"\"")
	for _, out := range []string{stdout, stderr} {
		if strings.Contains(out, "OPSGATE_TOKEN") {
			t.Errorf("OPSGATE_TOKEN (the API token of the README's curl examples) was warned about:\n%s", out)
		}
	}
}
