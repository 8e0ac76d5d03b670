package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// approvals show prints a request with the whole preview diff (a chat card
// shows 20 lines), redacted; a wrong id is a clear error.
func TestApprovalsShowPrintsTheWholeDiff(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "")
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "data", "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	var diff []string
	for i := range 30 {
		diff = append(diff, fmt.Sprintf("-line %d\n+line %d changed", i, i))
	}
	diff = append(diff, "+dsn: postgres://app:hunter2-s3cret@db.prod:5432/payments")
	now := time.Now()
	a := core.Approval{ID: "0123456789abcdef0123456789abcdef", RunID: "r1", ConvKey: "slack:T1:C1:1.2", CallID: "c1",
		Toolset: "k8s", Tool: "resources_create_or_update", Arguments: []byte(`{"resource":"kind: Deployment"}`),
		ActionHash: strings.Repeat("ab", 32), Risk: core.RiskWrite, Requester: core.Actor{ID: "slack:U1", Name: "@alice"},
		Status: core.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(30 * time.Minute),
		Preview: &core.Preview{Status: core.PreviewReady, Summary: "Deployment payments/web: changes image", Diff: strings.Join(diff, "\n"), Hash: "feed"}}
	if err := s.Apply(context.Background(), core.Batch{Approvals: []core.Approval{a}}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	code, out, errOut := runMain(t, testEnv(), "approvals", "show", a.ID, "--config", cfg)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	mustContain(t, "approvals show", out, "resources_create_or_update on k8s", "Deployment payments/web: changes image",
		"    -line 0", "    +line 29 changed", "@alice", "pending")
	if strings.Contains(out, "hunter2-s3cret") {
		t.Errorf("a secret in the preview was printed:\n%s", out)
	}

	code, out, _ = runMain(t, testEnv(), "approvals", "show", "--json", a.ID, "--config", cfg)
	if code != exitOK || !strings.Contains(out, `"summary": "Deployment payments/web: changes image"`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}

	code, _, errOut = runMain(t, testEnv(), "approvals", "show", "feedfeed", "--config", cfg)
	if code != exitError || !strings.Contains(errOut, `no approval "feedfeed"`) {
		t.Errorf("unknown id: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runMain(t, testEnv(), "approvals", "show", "--config", cfg)
	if code != exitUsage || !strings.Contains(errOut, "want one approval id, got") {
		t.Errorf("no id: exit %d, stderr %q", code, errOut)
	}
	code, _, _ = runMain(t, testEnv(), "approvals", "list", "--config", cfg)
	if code != exitUsage {
		t.Errorf("unknown subcommand: exit %d, want %d", code, exitUsage)
	}
}
