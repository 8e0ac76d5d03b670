package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// testEnv returns a getenv over fixed values: tests never read or change
// the process environment (so an OPENAI_API_KEY there cannot leak in).
func testEnv(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// writeConfig writes an opsgate.yaml for the fake LLM and, when mcpURL is
// set, the fake MCP server as toolset k8s; extra is appended verbatim.
func writeConfig(t *testing.T, dir, llmURL, mcpURL, extra string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "llm:\n  base_url: %s\n  api_key: test-key\n  model: fake-model\n", llmURL)
	fmt.Fprintf(&b, "store:\n  url: sqlite://%s\n", filepath.Join(dir, "data", "opsgate.db"))
	fmt.Fprintf(&b, "server:\n  listen: 127.0.0.1:0\n")
	if mcpURL != "" {
		fmt.Fprintf(&b, "tools:\n  servers:\n    - name: k8s\n      url: %s\n", mcpURL)
	}
	b.WriteString(extra)
	p := filepath.Join(dir, "opsgate.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// isTitleRequest reports whether req is the model call that titles a
// conversation after its third exchange (core's title prompt).
func isTitleRequest(req llmfake.Request) bool {
	return len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "Write a title for this operations conversation")
}

// lineOf is the number of the first line of file that contains text, as
// configuration errors name it ("(FILE line N)").
func lineOf(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line with %q", file, text)
	return 0
}
