package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/kubetest"
)

// unreachableKubeconfig is a kubeconfig whose cluster does not answer:
// kubernetes-mcp-server lists its tools without reaching one.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: none
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: none
  context: {cluster: none, user: none}
current-context: none
users:
- name: none
  user: {token: none}
`

// stdioServer is a tools.servers entry for argv with env and extra keys.
func stdioServer(name string, argv []string, env map[string]string, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    - name: %s\n      command: %q\n", name, argv[0])
	if len(argv) > 1 {
		q := make([]string, len(argv)-1)
		for i, a := range argv[1:] {
			q[i] = fmt.Sprintf("%q", a)
		}
		fmt.Fprintf(&b, "      args: [%s]\n", strings.Join(q, ", "))
	}
	if len(env) > 0 {
		b.WriteString("      env:\n")
		for k, v := range env {
			fmt.Fprintf(&b, "        %s: %q\n", k, v)
		}
	}
	b.WriteString(extra)
	return b.String()
}

// TestArgoCDAnnotationOverrides: issue 23, acceptance 8. The real argocd-mcp
// 0.9.0, whose 16 tools carry no annotations, with annotations: {read:
// ["get_*", "list_*"]}: doctor lists get_application as read (configured)
// and sync_application as needing approval. The real kubernetes-mcp-server
// 0.0.67 with a read glob "pods_*", which also matches tools it declares
// readOnlyHint: false: those still need approval and doctor warns naming
// each of them.
func TestArgoCDAnnotationOverrides(t *testing.T) {
	argo := kubetest.MCPServer(t, kubetest.ArgoCDMCP)
	k8s := kubetest.MCPServer(t, kubetest.KubernetesMCPServer)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	llm := llmfake.New(t)
	cfg := writeConfig(t, dir, llm.URL, "", "tools:\n  servers:\n"+
		stdioServer("argocd", argo, map[string]string{"ARGOCD_BASE_URL": "http://127.0.0.1:1", "ARGOCD_API_TOKEN": "test"},
			"      annotations: {read: [\"get_*\", \"list_*\"]}\n")+
		stdioServer("k8s", k8s, map[string]string{"KUBECONFIG": kubeconfig},
			"      annotations: {read: [\"pods_*\"]}\n"))

	code, stdout, stderr := runMain(t, testEnv(), "doctor", "--config", cfg)
	if code != exitOK {
		t.Errorf("doctor exited %d, want 0: a refused override is a warning\n%s%s", code, stdout, stderr)
	}
	tool := func(name, label string) string { return fmt.Sprintf("              %-28s %s\n", name, label) }
	mustInOrder(t, stdout,
		"ok    tools   argocd: 16 tools, 5 need approval",
		tool("list_applications", "read (configured)"),
		tool("get_application", "read (configured)"),
		tool("create_application", "write (needs approval)"),
		tool("delete_application", "write (needs approval)"),
		tool("sync_application", "write (needs approval)"),
		tool("run_resource_action", "write (needs approval)"),
		"ok    tools   k8s: ",
		tool("pods_delete", "destructive (needs approval)"),
		tool("pods_list", "read"),
		tool("pods_run", "write (needs approval)"),
	)
	for _, w := range []string{
		`warn  tools   k8s: pods_delete matches annotations.read "pods_*", but its server says readOnlyHint: false: it stays destructive and needs approval` + "\n",
		`warn  tools   k8s: pods_exec matches annotations.read "pods_*", but its server says readOnlyHint: false: it stays destructive and needs approval` + "\n",
		`warn  tools   k8s: pods_run matches annotations.read "pods_*", but its server says readOnlyHint: false: it stays write and needs approval` + "\n",
	} {
		mustContain(t, "doctor's report", stdout, w)
	}
	if n := strings.Count(stdout, "matches annotations.read"); n != 3 {
		t.Errorf("doctor warns about %d tools, want the 3 that kubernetes-mcp-server says are not read-only:\n%s", n, stdout)
	}
	if strings.Contains(stdout, "pods_list matches") || strings.Contains(stdout, "argocd: get_") {
		t.Errorf("doctor warns about a tool the override did loosen or that is already a read:\n%s", stdout)
	}
}

// The same overrides at work in `opsgate chat`: the model's
// get_application runs at once on the real argocd-mcp (which cannot reach
// an Argo CD here, so it fails, but it ran without a question), and
// pods_delete, matched by the read glob but declared readOnlyHint: false by
// kubernetes-mcp-server, asks and is denied. The audit says where each risk
// came from, and the chain verifies.
func TestArgoCDAnnotationOverridesInAChat(t *testing.T) {
	argo := kubetest.MCPServer(t, kubetest.ArgoCDMCP)
	k8s := kubetest.MCPServer(t, kubetest.KubernetesMCPServer)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	llm := llmfake.New(t)
	cfg := writeConfig(t, dir, llm.URL, "", "tools:\n  servers:\n"+
		stdioServer("argocd", argo, map[string]string{"ARGOCD_BASE_URL": "http://127.0.0.1:1", "ARGOCD_API_TOKEN": "test"},
			"      annotations: {read: [\"get_*\", \"list_*\"]}\n")+
		stdioServer("k8s", k8s, map[string]string{"KUBECONFIG": kubeconfig},
			"      annotations: {read: [\"pods_*\"]}\n"))
	llm.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{
			{ID: "c1", Name: "get_application", Arguments: `{"applicationName":"guestbook"}`},
			{ID: "c2", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`},
		}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c3", Name: "pods_delete", Arguments: `{"name":"web-1","namespace":"default"}`}}},
		llmfake.Reply{Text: "Left web-1 alone."},
	)

	stdout, stderr, code := chatRun(t, cfg, "check guestbook, then delete web-1\nn\n")
	if code != exitOK {
		t.Fatalf("chat exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	mustInOrder(t, stdout, "get_application", "approval needed: pods_delete on k8s (DESTRUCTIVE)", "pods_delete denied", "Left web-1 alone.\n")
	if n := strings.Count(stdout, "approval needed:"); n != 1 {
		t.Errorf("%d approval prompts, want 1 (pods_delete):\n%s", n, stdout)
	}

	code, out, errOut := runMain(t, testEnv(), "audit", "--json", "--config", cfg)
	if code != exitOK {
		t.Fatalf("audit --json exited %d: %s", code, errOut)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e core.AuditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		got = append(got, fmt.Sprintf("%s %s/%s %s %s", e.Kind, e.Toolset, e.Tool, e.Risk, e.RiskSource))
	}
	want := []string{
		"failed argocd/get_application read configured", // no Argo CD to answer
		"proposed k8s/pods_delete destructive annotation",
		"denied k8s/pods_delete destructive ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	code, out, errOut = runMain(t, testEnv(), "audit", "verify", "--config", cfg)
	if code != exitOK {
		t.Errorf("audit verify exited %d: %s%s", code, out, errOut)
	}
}
