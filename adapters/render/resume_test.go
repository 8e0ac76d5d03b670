package render_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/core"
)

// A paused draft follows its run: it says it waits while any request of
// the batch is open, points below once the run goes on, and ends with how
// the run ended. It is only ever edited, never posted again.
func TestPausedDraftFollowsItsRun(t *testing.T) {
	s, p := newSender(t, fastLimits)
	const conv = "mem:bot:1"
	sc := rendertest.NewScript(conv, "r1")
	first := rendertest.NewApproval(conv, sc.Run, strings.Repeat("a", 32))
	second := rendertest.NewApproval(conv, sc.Run, strings.Repeat("b", 32))
	second.Tool = "restart_pod"
	send(t, s, sc.Event(core.EventGenerationStart), sc.Text(core.EventGenerationComplete, "Two changes."),
		sc.Approval(core.EventToolAwaitingApproval, first), sc.Approval(core.EventToolAwaitingApproval, second),
		sc.Completed(core.RunAwaitingApproval, ""))
	flush(t, s)
	msgs := p.Messages(conv)
	if len(msgs) != 3 {
		t.Fatalf("messages = %+v, want the draft and two cards", msgs)
	}
	draft := msgs[0].ID
	shows := func(what string) string {
		t.Helper()
		flush(t, s)
		for _, m := range p.Messages(conv) {
			if m.ID == draft {
				return m.Text
			}
		}
		t.Fatalf("%s: the draft %s is gone", what, draft)
		return ""
	}

	decided := func(a core.Approval, st core.ApprovalStatus) core.Approval {
		a.Status, a.DecidedBy, a.DecidedAt = st, core.Actor{ID: "u-bob", Name: "@bob"}, time.Now()
		return a
	}
	send(t, s, sc.Approval(core.EventToolApproved, decided(first, core.ApprovalApproved)))
	if got := shows("one of two decided"); !strings.Contains(got, "approved by @bob") || !strings.Contains(got, "Waiting for approval") {
		t.Errorf("draft with one request open = %q, want the decision and still waiting", got)
	}
	send(t, s, sc.Approval(core.EventToolDenied, decided(second, core.ApprovalDenied)),
		sc.Tool(core.EventToolExecuting, first.CallID, first.Tool, string(first.Arguments)))
	got := shows("resumed")
	if strings.Contains(got, "Waiting for approval") || strings.Contains(got, "awaiting approval") ||
		!strings.Contains(got, "denied by @bob") || !strings.Contains(got, "Continued below") {
		t.Errorf("draft after the run resumed = %q, want the decisions and a pointer below", got)
	}
	send(t, s, sc.Tool(core.EventToolResult, first.CallID, first.Tool, string(first.Arguments)),
		sc.Text(core.EventToken, "Scaled; restart denied."), sc.Completed(core.RunDone, "Scaled; restart denied."))
	got = shows("done")
	if !strings.Contains(got, "✅ scale_deployment") || !strings.Contains(got, "Done: the answer is below.") {
		t.Errorf("draft after the run ended = %q, want the call's outcome and the end", got)
	}
	msgs = p.Messages(conv)
	if n := len(msgs); n != 4 || !strings.Contains(msgs[3].Text, "Scaled; restart denied.") {
		t.Errorf("messages = %+v, want the draft, two cards and the continued run", msgs)
	}
}
