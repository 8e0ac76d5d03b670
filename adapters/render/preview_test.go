package render_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/core"
)

// A card is posted with its preview pending and edited in place when the
// preview arrives: at most render.MaxPreviewLines lines of the diff, and
// where to see the rest. A stale request's card says it was not run.
func TestCardShowsPreviewWhenItArrives(t *testing.T) {
	s, p := newSender(t, render.Limits{MaxText: 4000, MinEditInterval: time.Millisecond, FirstSendDebounce: time.Millisecond, MaxButtonData: 64})
	const conv = "mem:bot:1"
	a := core.Approval{ID: "a1b2c3", RunID: "r1", ConvKey: conv, CallID: "c1", Tool: "resources_create_or_update", Toolset: "k8s",
		Arguments: []byte(`{"resource":"kind: Deployment"}`), Risk: core.RiskWrite, Status: core.ApprovalPending,
		Requester: core.Actor{ID: "u1", Name: "alice"}, Preview: &core.Preview{Status: core.PreviewPending}}
	ev := func(typ core.EventType, a core.Approval) core.Event {
		return core.Event{Type: typ, ConvKey: conv, RunID: "r1", Approval: &a, Call: &core.CallInfo{ID: "c1", Name: a.Tool}}
	}
	send := func(e core.Event) {
		if err := s.Send(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	send(ev(core.EventToolAwaitingApproval, a))
	flush(t, s)
	card := cardIn(t, p.Messages(conv))
	if !strings.Contains(card.Text, "Preview: working it out") || len(card.Buttons) != 2 {
		t.Fatalf("first card = %+v", card)
	}
	n := len(p.Messages(conv))

	var diff []string
	for i := range 30 {
		diff = append(diff, fmt.Sprintf("-line %d\n+line %d changed", i, i))
	}
	a.Preview = &core.Preview{Status: core.PreviewReady, Summary: "Deployment web: changes image", Diff: strings.Join(diff, "\n"), Hash: "h"}
	send(ev(core.EventToolAwaitingApproval, a))
	flush(t, s)
	if got := len(p.Messages(conv)); got != n {
		t.Fatalf("the preview made a new message instead of editing the card: %d messages, want %d", got, n)
	}
	card = cardIn(t, p.Messages(conv))
	text := card.Text
	for _, want := range []string{"What changes", "Deployment web: changes image", "-line 0", "+line 9 changed", "40 more lines: ", "opsgate approvals show a1b2c3"} {
		if !strings.Contains(text, want) {
			t.Errorf("card lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "-line 10") || len(card.Buttons) != 2 {
		t.Errorf("card shows more than %d diff lines, or lost its buttons:\n%s", render.MaxPreviewLines, text)
	}

	a.Status, a.DecidedBy = core.ApprovalApproved, core.Actor{ID: "u2", Name: "bob"}
	a.Preview.Stale = "not run: changed since it was approved: was \"replicas: 2 → 5\", now \"replicas: 4 → 5\"; asked again in a new request"
	send(ev(core.EventToolApproved, a))
	flush(t, s)
	if text := cardIn(t, p.Messages(conv)).Text; !strings.Contains(text, "Stale") || !strings.Contains(text, "asked again") {
		t.Errorf("the stale card does not say so:\n%s", text)
	}
}

func TestCardSaysWhyThereIsNoPreview(t *testing.T) {
	s, p := newSender(t, render.Limits{MaxText: 4000, MinEditInterval: time.Millisecond, FirstSendDebounce: time.Millisecond, MaxButtonData: 64})
	const conv = "mem:bot:2"
	a := core.Approval{ID: "a9", RunID: "r1", ConvKey: conv, CallID: "c1", Tool: "set_size", Risk: core.RiskWrite,
		Status: core.ApprovalPending, Preview: &core.Preview{Status: core.PreviewNone, Why: "timed out"}}
	if err := s.Send(context.Background(), core.Event{Type: core.EventToolAwaitingApproval, ConvKey: conv, RunID: "r1", Approval: &a}); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	if card := cardIn(t, p.Messages(conv)); !strings.Contains(card.Text, "no preview: timed out") {
		t.Errorf("card = %+v", card)
	}
}

// cardIn finds the approval card among a conversation's messages.
func cardIn(t *testing.T, msgs []rendertest.Message) rendertest.Message {
	t.Helper()
	for _, m := range msgs {
		if strings.Contains(m.Text, "Approval needed") {
			return m
		}
	}
	t.Fatalf("no approval card in %+v", msgs)
	return rendertest.Message{}
}
