package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// The secrets of the redaction tests: an AWS key pair, a PEM private key,
// a JWT, a database URL's password and a Kubernetes Secret's base64 data.
var (
	awsKeyID     = "AKIA4QZ7RT2LMXW9PKD3"
	awsSecret    = "wJa9rXUtnFEMIsK7MDhNGtbPxRfiCYzq8SxT9kLm"
	pemLine      = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0"
	jwt          = "eyJhbGciOiJSUzI1NiIsImtpZCI6InByb2QifQ.eyJzdWIiOiJkZXBsb3llciIsIm5zIjoicHJvZCJ9.Tm9UaGlzSXNOb3RBUmVhbFNpZ25hdHVyZUJ1dEl0SXNMb25n"
	dbPassword   = "Sup3rS3cretPw9x"
	secretData   = "c3VwZXJzZWNyZXRwYXNzd29yZDEyMzQ1"
	secretValues = []string{awsKeyID, awsSecret, pemLine, jwt, dbPassword, secretData}
)

var leakyOutput = `$ cat ~/.aws/credentials
[default]
aws_access_key_id = ` + awsKeyID + `
aws_secret_access_key = ` + awsSecret + `
$ cat deploy/id_rsa
-----BEGIN RSA PRIVATE KEY-----
` + pemLine + `
-----END RSA PRIVATE KEY-----
$ kubectl create token deployer
` + jwt + `
DATABASE_URL=postgres://orders:` + dbPassword + `@db.prod.internal:5432/orders
$ kubectl -n prod get secret db-credentials -o yaml
apiVersion: v1
data:
  password: ` + secretData + `
kind: Secret
metadata:
  name: db-credentials
`

// leaks returns the 8-character pieces of any secret found in text.
func leaks(text string) []string {
	var found []string
	for _, s := range secretValues {
		for i := 0; i+8 <= len(s); i++ {
			if piece := s[i : i+8]; strings.Contains(text, piece) {
				found = append(found, piece)
				break
			}
		}
	}
	return found
}

// leakyServer is a real MCP server over streamable HTTP: secrets_dump (a
// read) prints the secrets; deploy_config (a write) records the arguments
// it ran with.
type leakyServer struct {
	URL  string
	mu   sync.Mutex
	args []map[string]any
}

func newLeakyServer(t *testing.T) *leakyServer {
	t.Helper()
	ls := &leakyServer{}
	srv := server.NewMCPServer("ops", "1.0.0", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("secrets_dump", mcp.WithDescription("Print credentials."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(leakyOutput), nil
		})
	srv.AddTool(mcp.NewTool("deploy_config", mcp.WithDescription("Deploy a configuration."),
		mcp.WithString("name", mcp.Required()), mcp.WithString("database_url", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(false)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ls.mu.Lock()
			ls.args = append(ls.args, req.GetArguments())
			ls.mu.Unlock()
			return mcp.NewToolResultText("deployed"), nil
		})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(ts.Close)
	ls.URL = ts.URL + "/mcp"
	return ls
}

func (ls *leakyServer) calls() []map[string]any {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return append([]map[string]any(nil), ls.args...)
}

// echoAnswer is a model answer that repeats the tool's output verbatim,
// secrets and all (a model given the output unredacted would).
func echoAnswer() string {
	return "Here is what the tool printed:\n" + leakyOutput + "END OF ANSWER"
}

// Issue 10, acceptance 5: a tool result with an AWS key pair, a PEM key, a
// JWT, a database URL with a password and a Secret's data, and a model
// repeating them one or two characters per token: no call to the Telegram
// fake (every send and edit, not only the final text) carries 8 characters
// of a secret, the model was given the result redacted, and the log lines
// hold none either.
func TestNoSecretReachesChatModelOrLogs(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	ops := newLeakyServer(t)
	cfg := writeConfig(t, dir, model.URL, ops.URL, "  default_toolsets: [k8s]\n"+telegramConfig(tg))
	model.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "secrets_dump", Arguments: `{}`}}},
		llmfake.Reply{Text: echoAnswer(), SplitChars: 2, TokenDelay: 4 * time.Millisecond},
	)
	s := serveConfig(t, cfg)
	sre := telegramtest.User(42, "sre")
	tg.SendText(telegramtest.PrivateChat(42), sre, "show me the credentials of prod")
	waitFor(t, 30*time.Second, "the final answer", func() bool {
		for _, m := range tg.Messages(42) {
			if strings.Contains(m.Visible, "END OF ANSWER") {
				return true
			}
		}
		return false
	})
	s.stop(t)

	calls := tg.Calls()
	texts := 0
	for _, c := range calls {
		for key, values := range c.Params {
			for _, v := range values {
				if l := leaks(v); len(l) > 0 {
					t.Errorf("%s %s carried secret pieces %q", c.Method, key, l)
				}
			}
		}
		if c.Method == "sendMessage" || c.Method == "editMessageText" {
			texts++
		}
	}
	if texts < 3 {
		t.Errorf("only %d sends and edits: the answer was not streamed, the test proves little", texts)
	}
	final := ""
	for _, m := range tg.Messages(42) {
		final += m.Visible + "\n"
	}
	for _, kind := range []string{"[REDACTED:"} {
		if !strings.Contains(final, kind) {
			t.Errorf("the chat shows no %s marker:\n%s", kind, final)
		}
	}
	reqs := model.Requests()
	if len(reqs) < 2 {
		t.Fatalf("model requests = %d, want 2", len(reqs))
	}
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			if l := leaks(m.Content); len(l) > 0 || !strings.Contains(m.Content, "[REDACTED:") {
				t.Errorf("the model was given the tool result with secret pieces %q:\n%s", l, m.Content)
			}
		}
	}
	if l := leaks(s.log.String()); len(l) > 0 {
		t.Errorf("the log holds secret pieces %q", l)
	}
}

// Issue 10, acceptance 5 (terminal): the same through opsgate chat.
func TestNoSecretReachesTheTerminal(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	ops := newLeakyServer(t)
	cfg := writeConfig(t, dir, model.URL, ops.URL, "  default_toolsets: [k8s]\n")
	model.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "secrets_dump", Arguments: `{}`}}},
		llmfake.Reply{Text: echoAnswer(), SplitChars: 2},
	)
	var out, errOut coretest.SyncBuffer
	code := Main(context.Background(), []string{"chat", "--config", cfg, "--log-level", "debug"},
		strings.NewReader("show me the credentials of prod\n"), &out, &errOut, testEnv("USER", "sre"))
	if code != exitOK {
		t.Fatalf("chat exited %d:\n%s\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "END OF ANSWER") || !strings.Contains(out.String(), "[REDACTED:") {
		t.Fatalf("terminal output lacks the redacted answer:\n%s", out.String())
	}
	for name, text := range map[string]string{"stdout": out.String(), "stderr (debug log)": errOut.String()} {
		if l := leaks(text); len(l) > 0 {
			t.Errorf("%s holds secret pieces %q", name, l)
		}
	}
}

// Issue 10, acceptance 6: the approval card shows the arguments redacted,
// and the tool runs with the exact arguments that were approved.
func TestApprovalCardRedactsArgumentsToolGetsThemExact(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	ops := newLeakyServer(t)
	cfg := writeConfig(t, dir, model.URL, ops.URL, telegramConfig(tg))
	dbURL := "postgres://orders:" + dbPassword + "@db.prod.internal:5432/orders"
	args, _ := json.Marshal(map[string]string{"name": "orders", "database_url": dbURL})
	model.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c0", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "deploy_config", Arguments: string(args)}}},
		llmfake.Reply{Text: "Deployed."},
	)
	s := serveConfig(t, cfg)
	sre := telegramtest.User(42, "sre")
	tg.SendText(telegramtest.PrivateChat(42), sre, "deploy the orders config")
	var card telegramtest.Message
	waitFor(t, 30*time.Second, "the approval card", func() bool {
		for _, m := range tg.Messages(42) {
			if strings.Contains(m.Visible, "Approval needed") && len(m.Buttons) == 2 {
				card = m
				return true
			}
		}
		return false
	})
	if l := leaks(card.Visible); len(l) > 0 || !strings.Contains(card.Visible, "db.prod.internal") {
		t.Fatalf("card shows secret pieces %q (or not the arguments):\n%s", l, card.Visible)
	}
	tg.Click(42, card.ID, sre, card.Buttons[0].Data)
	waitFor(t, 30*time.Second, "the tool to run", func() bool { return len(ops.calls()) == 1 })
	if got := ops.calls()[0]["database_url"]; got != dbURL {
		t.Errorf("the tool ran with database_url %q, want the exact %q", got, dbURL)
	}
	s.stop(t)
	for _, c := range tg.Calls() {
		if l := leaks(fmt.Sprint(c.Params)); len(l) > 0 {
			t.Errorf("%s carried secret pieces %q: %s", c.Method, l, c.Params.Get("text"))
		}
	}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
