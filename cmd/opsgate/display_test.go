package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/config"
)

// Issue 22, one display boundary: the engine as serve wires it hands out
// only what is safe to show. Secrets planted in a person's message, a
// tool result, the arguments of a call that waits for approval (its
// approval), a decision's reason and the model's answer leave by none of
// its doors: the events every subscriber gets, what Decide and Status
// return, and its listing of kept events (Engine.Events). Nothing
// downstream redacts them again, so this is the test that they are safe
// where they leave; the tool itself ran with the real values.
func TestDisplayBoundaryLetsNoSecretOut(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	ops := newLeakyServer(t)
	cfg, err := config.Load(writeConfig(t, dir, model.URL, ops.URL, ""), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	dbURL := "postgres://orders:" + dbPassword + "@db.prod.internal:5432/orders"
	model.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c0", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "secrets_dump", Arguments: `{}`}}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c2", Name: "deploy_config",
			Arguments: `{"name":"orders","database_url":"` + dbURL + `"}`}}},
		llmfake.Reply{Text: echoAnswer(), SplitChars: 3},
	)
	ctx := context.Background()
	a, err := openApp(ctx, cfg, coretest.Logger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.shutdown(ctx)
	seen := coretest.NewRecorder()
	a.engine.Subscribe("", seen, core.SubscribeOptions{})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go a.engine.Run(runCtx)

	const conv = "terminal:sre:display"
	sre := core.Actor{ID: "terminal:sre", Name: "sre"}
	out := map[string]any{} // door -> what left by it
	if err := a.engine.Handle(ctx, core.Inbound{ConvKey: conv, MessageID: "m1", User: sre, Time: time.Now(),
		Text: "deploy orders with " + dbURL + " and the key " + awsSecret}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, ev := range seen.Events() {
				t.Logf("event %s %s %s", ev.Type, ev.Text, ev.Error)
			}
		}
	})
	waitFor(t, 30*time.Second, "the deploy to wait for approval", func() bool {
		st, err := a.engine.Status(ctx, conv)
		if err != nil || len(st.PendingApprovals) == 0 {
			return false
		}
		out["Status"] = st
		return true
	})
	st := out["Status"].(core.Status)
	decided, err := a.engine.Decide(ctx, core.Decision{ApprovalID: st.PendingApprovals[0].ID, Actor: sre, Approve: true,
		Reason: "checked " + dbURL + " works"})
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	out["Decide"] = decided
	seen.WaitCompleted(t, 1)
	if err := a.engine.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	out["events"] = seen.Events()
	kept, err := a.engine.Events(ctx, core.EventQuery{ConvKey: conv})
	if err != nil {
		t.Fatal(err)
	}
	out["Events"] = kept

	for door, v := range out {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if l := leaks(string(raw)); len(l) > 0 {
			t.Errorf("%s let secret pieces out: %q", door, l)
		}
		if !strings.Contains(string(raw), "[REDACTED:") {
			t.Errorf("%s shows no [REDACTED:…] marker, so it showed no secret's place: the test proves little:\n%s", door, raw)
		}
	}
	// The engine's own copies are the real ones: the tool ran with them.
	if calls := ops.calls(); len(calls) != 1 || calls[0]["database_url"] != dbURL {
		t.Errorf("deploy_config ran with %v, want the real database URL", calls)
	}
	stored, err := a.store.Approval(ctx, decided.ID)
	if err != nil || !strings.Contains(string(stored.Arguments), dbPassword) {
		t.Errorf("the stored approval = %s, %v; want the real arguments kept", stored.Arguments, err)
	}
}
