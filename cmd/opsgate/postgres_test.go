package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// usePostgres points the config file at a fresh PostgreSQL database and
// returns its URL.
func usePostgres(t *testing.T, cfg string) string {
	t.Helper()
	url := pgtest.DB(t)
	setStoreURL(t, cfg, url)
	return url
}

// setStoreURL replaces the sqlite store.url writeConfig wrote with url.
func setStoreURL(t *testing.T, cfg, url string) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^  url: sqlite://.*$`)
	if !re.Match(b) {
		t.Fatalf("%s has no sqlite store.url to replace:\n%s", cfg, b)
	}
	b = re.ReplaceAll(b, []byte("  url: "+url))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The real binary on PostgreSQL: migrate, a chat with an approved write,
// a second chat resuming the first, and a verified audit chain.
func TestBinaryOnPostgres(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	mcp := mcpfake.New()
	cfg := writeConfig(t, dir, llm.URL, mcp.ServeHTTP(t), "")
	usePostgres(t, cfg)

	stdout, stderr, code := runBinary(t, dir, "", "migrate", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "store: postgres postgres://postgres@127.0.0.1:") || !strings.Contains(stdout, "schema version ") {
		t.Fatalf("migrate: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	llm.Push(
		toolCall("c1", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		toolCall("c2", "scale_deployment", `{"name":"web","replicas":3}`),
		llmfake.Reply{Text: "Scaled web to 3 replicas."},
		llmfake.Reply{Text: "It is still at 3."},
	)
	stdout, stderr, code = runBinary(t, dir, "scale web to 3\ny\n", "chat", "--config", cfg)
	if code != 0 {
		t.Fatalf("chat: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	mustInOrder(t, stdout, "approve scale_deployment (name=web replicas=3)? [y/N]\n", "Scaled web to 3 replicas.\n")
	if n := len(mcp.Calls()); n != 1 {
		t.Fatalf("MCP calls = %d, want 1", n)
	}

	stdout, stderr, code = runBinary(t, dir, "and now?\n", "chat", "--resume", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "It is still at 3.") {
		t.Fatalf("chat --resume: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The resumed conversation's model request carries the first exchange.
	reqs := llm.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(string(last.Raw), "scale web to 3") {
		t.Errorf("the resumed conversation lost its transcript:\n%s", last.Raw)
	}

	stdout, stderr, code = runBinary(t, dir, "", "audit", "verify", "--config", cfg)
	if code != 0 {
		t.Fatalf("audit verify: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Errorf("a SQLite data directory was created although store.url names PostgreSQL")
	}
}
