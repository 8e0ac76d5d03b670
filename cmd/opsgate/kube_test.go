package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/kubetest"
)

// kubeServerYAML is a tools.servers entry (indented for writeConfig's
// extra) that starts the named MCP server of internal/kubetest against
// cluster c. JSON is YAML: paths need no further quoting.
func kubeServerYAML(t *testing.T, c *kubetest.Cluster, toolset, server string) string {
	t.Helper()
	argv := kubetest.MCPServer(t, server)
	cmd, _ := json.Marshal(argv[0])
	args, _ := json.Marshal(argv[1:])
	env, _ := json.Marshal(c.Env())
	return fmt.Sprintf("    - name: %s\n      command: %s\n      args: %s\n      env: %s\n", toolset, cmd, args, env)
}

// TestKubeReadToolRunsWithoutCard is issue 23's acceptance item 1, on a
// real control plane with the real kubernetes-mcp-server: a Telegram user
// asks what runs in payments, the model calls pods_list_in_namespace, the
// call runs at once without an approval card, and what the server read
// from the cluster (the pods of payments-api) reaches the model.
func TestKubeReadToolRunsWithoutCard(t *testing.T) {
	c := kubetest.Shared(t)
	ns := c.Namespace(t, "payments")
	c.Kubectl(t, "-n", ns, "create", "deployment", "payments-api", "--image=registry.example/payments-api:1.4", "--replicas=2")
	var pods []string
	deadline := time.Now().Add(time.Minute)
	for len(pods) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("payments-api has pods %v after a minute, want 2", pods)
		}
		time.Sleep(200 * time.Millisecond)
		pods = strings.Fields(c.Kubectl(t, "-n", ns, "get", "pods", "-o", "jsonpath={.items[*].metadata.name}"))
	}

	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	model.Push(
		toolCall("c1", "pods_list_in_namespace", fmt.Sprintf(`{"namespace":%q}`, ns)),
		llmfake.Reply{Text: "payments-api has 2 pods in " + ns + ", both Pending."},
	)
	extra := "tools:\n  servers:\n" + kubeServerYAML(t, c, "k8s", kubetest.KubernetesMCPServer) +
		fmt.Sprintf("telegram:\n  token: %q\n  api_url: %s\n  allowed_users: [%d]\n", telegramtest.Token, tg.URL, aliceTG)
	cfg := writeConfig(t, dir, model.URL, "", extra)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut coretest.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, []string{"serve", "--config", cfg}, nil, &out, &errOut, testEnv()) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	waitLog(t, &errOut, done, regexp.MustCompile(`msg="opsgate serving"`))

	tg.Push(tg.NewTextUpdate(telegramtest.PrivateChat(aliceTG), telegramtest.User(aliceTG, "alice"), "what runs in "+ns+"?"))
	answer := "payments-api has 2 pods in " + ns + ", both Pending."
	timeout := time.After(2 * time.Minute) // the server starts on first use
	for !answered(tg.Messages(aliceTG), answer) {
		select {
		case <-tg.Changed():
		case code := <-done:
			t.Fatalf("serve exited with %d:\n%s", code, errOut.String())
		case <-timeout:
			t.Fatalf("no answer in the chat; messages: %+v\nlog:\n%s", tg.Messages(aliceTG), errOut.String())
		}
	}

	// No card: nothing in the chat asks for an approval or has buttons.
	for _, m := range tg.Messages(aliceTG) {
		if len(m.Buttons) > 0 || strings.Contains(strings.ToLower(m.Visible), "approv") {
			t.Errorf("a read asked for approval: message %q with buttons %+v", m.Visible, m.Buttons)
		}
	}
	// The model was offered the read tool from the start and, in its next
	// request, got what the server read from the cluster.
	reqs := model.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests, want the tool call's and the answer's", len(reqs))
	}
	offered := false
	for _, tool := range reqs[0].Tools {
		offered = offered || tool.Name == "pods_list_in_namespace"
	}
	if !offered {
		t.Errorf("the first request did not offer pods_list_in_namespace")
	}
	var result *llmfake.Message
	for i, m := range reqs[1].Messages {
		if m.Role == "tool" && m.ToolCallID == "c1" {
			result = &reqs[1].Messages[i]
		}
	}
	if result == nil {
		t.Fatalf("the second request carries no result of c1: %+v", reqs[1].Messages)
	}
	for _, pod := range pods {
		if !strings.Contains(result.Content, pod) {
			t.Errorf("the result the model got does not name pod %s:\n%s", pod, result.Content)
		}
	}
}
