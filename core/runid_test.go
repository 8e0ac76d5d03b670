package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// A message that names its run (the HTTP API's Idempotency-Key does) is
// answered by a run of that id; arriving while another run is active in
// steer mode, it is queued for a run of its own instead of steering, so
// the name holds.
func TestInboundRunIDNamesItsRun(t *testing.T) {
	h := newHarness(t)
	hold := make(chan struct{})
	// The first run calls a tool, so it makes a second model call that a
	// steering message would join.
	h.llm.Push(
		llmfake.Reply{Text: "Checking prod.", Hold: hold, ToolCalls: []llmfake.ToolCall{call("c1", "get_pods", `{"namespace":"prod"}`)}},
		text("first answer"),
		text("second answer"),
	)
	if err := h.eng.Handle(context.Background(), core.Inbound{ConvKey: conv, MessageID: "m1", User: alice, Text: "check prod", RunID: "run-first"}); err != nil {
		t.Fatal(err)
	}
	h.rec.Wait(t, 5*time.Second, 1, coretest.Of(core.EventToken))
	if err := h.eng.Handle(context.Background(), core.Inbound{ConvKey: conv, MessageID: "m2", User: alice, Text: "and staging", RunID: "run-second"}); err != nil {
		t.Fatal(err)
	}
	close(hold)
	first, second := h.rec.WaitCompleted(t, 1), h.rec.WaitCompleted(t, 2)
	if first.RunID != "run-first" || first.Text != "first answer" {
		t.Errorf("first completed = %s %q, want run-first with the first answer", first.RunID, first.Text)
	}
	if second.RunID != "run-second" || second.Text != "second answer" {
		t.Errorf("second completed = %s %q, want run-second, a run of its own", second.RunID, second.Text)
	}
	if n := len(h.llm.Requests()); n != 3 {
		t.Errorf("model calls = %d, want 3", n)
	}
}
