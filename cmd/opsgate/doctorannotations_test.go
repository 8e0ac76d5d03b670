package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

// doctor shows what a server's annotations overrides did, and warns about
// what they could not do: a read glob over a tool the server says writes,
// and a glob that matches nothing.
func TestDoctorShowsAnnotationOverrides(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	k8s := mcpfake.New()
	cfg := writeConfig(t, dir, llm.URL, k8s.ServeHTTP(t),
		"      annotations:\n        read: [restart_*, scale_*, lst_*]\n        destructive: [drain_*]\n")

	code, stdout, stderr := runMain(t, testEnv(), "doctor", "--config", cfg)
	if code != exitOK {
		t.Errorf("doctor exited %d, want 0: what an override cannot do is a warning\n%s%s", code, stdout, stderr)
	}
	tool := func(name, label string) string { return fmt.Sprintf("              %-28s %s\n", name, label) }
	mustInOrder(t, stdout,
		"ok    tools   k8s: 8 tools, 3 need approval",
		tool("delete_namespace", "destructive (needs approval)"),
		tool("drain_node", "destructive (configured), needs approval"),
		tool("get_pods", "read"),
		tool("restart_pod", "read (configured)"),
		tool("scale_deployment", "write (needs approval)"),
		`warn  tools   k8s: scale_deployment matches annotations.read "scale_*", but its server says readOnlyHint: false: it stays write and needs approval`+"\n",
		`warn  tools   k8s: annotations.read "lst_*" matches none of its tools`+"\n",
	)
	if n := strings.Count(stdout, "warn  tools"); n != 2 {
		t.Errorf("%d tool warnings, want 2:\n%s", n, stdout)
	}
}
