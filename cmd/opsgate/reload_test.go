package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/policy"
)

// Issue 10, acceptance 9 (SIGHUP): a real SIGHUP reloads the policy; a bad
// file keeps the policy in force and the log names FILE:LINE; a fixed file
// is then loaded.
func TestSIGHUPReloadKeepsPolicyOnBadFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.yaml")
	write := func(src string) {
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("rules:\n  - name: no-deletes\n    match: {tool: \"*_delete\"}\n    action: deny\n")
	p, err := policy.Load(file, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	holder := policy.NewHolder(p)
	var logs coretest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reloaded := policy.ReloadOnHUP(ctx, holder, file, slog.New(slog.NewTextHandler(&logs, nil)))
	call := core.PolicyCall{Server: "k8s", Tool: "pods_delete", Risk: core.RiskDestructive, Requester: core.Actor{ID: "slack:U1"}}
	hup := func() error {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-reloaded:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("no reload after SIGHUP")
			return nil
		}
	}

	write("rules:\n  - name: no-deletes\n    match: {tool: \"[\"}\n    action: deny\n")
	if err := hup(); err == nil {
		t.Fatal("a bad file reloaded without an error")
	}
	if v := holder.Classify(call); v.Action != core.ActionDeny || v.Rule != "no-deletes" {
		t.Errorf("after a bad reload the policy says %+v, want the old deny rule", v)
	}
	mustContain(t, "log", logs.String(), "level=ERROR", "policy not reloaded; the policy in force stays", file+":3: rules[0].match.tool")

	write("rules:\n  - name: deletes-need-two\n    match: {tool: \"*_delete\"}\n    action: ask\n    approvers: [slack:U2, slack:U3]\n    quorum: 2\n")
	if err := hup(); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	if v := holder.Classify(call); v.Action != core.ActionAsk || v.Quorum != 2 {
		t.Errorf("after the fix the policy says %+v, want the new ask rule with quorum 2", v)
	}
	if !strings.Contains(logs.String(), "SIGHUP: policy reloaded") {
		t.Errorf("log lacks the reload:\n%s", logs.String())
	}
}
