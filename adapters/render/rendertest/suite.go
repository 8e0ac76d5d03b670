package rendertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// Env is one adapter's sender wired to a fresh fake of its platform.
type Env struct {
	// Sender is the adapter's core.EventSender.
	Sender core.EventSender
	// NewConv returns the key of a new conversation the fake accepts.
	NewConv func() string
	// Flush waits until the sender delivered everything sent so far.
	Flush func(ctx context.Context) error
	// Messages returns what conv shows, oldest first, as a reader sees it
	// (markup rendered away).
	Messages func(conv string) []Message
	// Calls counts the successful message calls the fake saw for conv.
	Calls func(conv string) Calls
	// Limits are the limits the sender was configured with.
	Limits render.Limits
}

// Message is a message as the fake shows it.
type Message struct {
	ID      string
	Text    string
	Buttons []render.Button
}

// Calls counts message calls.
type Calls struct {
	Posts, Edits int
}

// Run is the sender conformance suite. setup is called once per case and
// must return a fresh sender and platform fake. The suite checks what a
// user would see: exact final text, no duplicates, tool lines, approval
// cards and their outcomes, the Stop button, and long answers split over
// messages without cutting a code fence.
func Run(t *testing.T, setup func(t *testing.T) Env) {
	cases := []struct {
		name string
		f    func(t *testing.T, e Env)
	}{
		{"StreamedFinalTextIsExact", testFinalText},
		{"ShortReplyIsOnePost", testShortReply},
		{"StopButtonWhileRunning", testStopButton},
		{"ToolStatusLines", testToolLines},
		{"ApprovalCardOutcomes", testApprovalOutcomes},
		{"RedeliveredApprovalIsOneCard", testRedeliveredCard},
		{"QuorumVoteChangesOnlyTheCard", testQuorumVote},
		{"LongAnswerRotatesWithoutSplittingFences", testRotation},
		{"WorkflowErrorIsReadable", testWorkflowError},
		{"ConversationsAreIndependent", testIndependent},
		{"IdenticalTextIsNotReEdited", testIdentical},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.f(t, setup(t))
		})
	}
}

func send(t *testing.T, e Env, evs ...core.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := e.Sender.Send(context.Background(), ev); err != nil {
			t.Fatalf("Send(%s): %v", ev.Type, err)
		}
	}
}

func flush(t *testing.T, e Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func sentence(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "word%d ", i)
	}
	return strings.TrimSpace(b.String()) + "."
}

func testFinalText(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-final")
	answer := sentence(min(60, e.Limits.MaxText/16)) // fits one message
	send(t, e, s.Event(core.EventReady), s.Event(core.EventGenerationStart))
	send(t, e, s.Tokens(answer, 7)...)
	send(t, e, s.Text(core.EventGenerationComplete, answer), s.Completed(core.RunDone, answer))
	flush(t, e)
	msgs := e.Messages(conv)
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1: %+v", len(msgs), msgs)
	}
	if got := strings.TrimSpace(msgs[0].Text); got != answer {
		t.Errorf("final text:\n got %q\nwant %q", got, answer)
	}
	if len(msgs[0].Buttons) != 0 {
		t.Errorf("buttons left after completion: %v", msgs[0].Buttons)
	}
	if c := e.Calls(conv); c.Posts != 1 {
		t.Errorf("posts = %d, want 1", c.Posts)
	}
}

func testShortReply(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-short")
	send(t, e, s.Event(core.EventGenerationStart), s.Text(core.EventToken, "Pong."), s.Completed(core.RunDone, "Pong."))
	flush(t, e)
	msgs := e.Messages(conv)
	if len(msgs) != 1 || strings.TrimSpace(msgs[0].Text) != "Pong." {
		t.Fatalf("messages = %+v, want one \"Pong.\"", msgs)
	}
	if c := e.Calls(conv); c.Posts != 1 || c.Edits != 0 {
		t.Errorf("calls = %+v, want 1 post and no edit (the reply ended within the debounce)", c)
	}
}

func testStopButton(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-stop-0123456789")
	send(t, e, s.Event(core.EventGenerationStart))
	send(t, e, s.Tokens("Checking the deployment history now", 5)...)
	flush(t, e)
	msgs := e.Messages(conv)
	if len(msgs) != 1 || len(msgs[0].Buttons) != 1 {
		t.Fatalf("while running: want one message with a Stop button, got %+v", msgs)
	}
	data := msgs[0].Buttons[0].Data
	act, id, ok := render.ParseButtonData(data)
	if !ok || act != render.ActionStop || !strings.HasPrefix(s.Run, id) || len(data) > maxData(e) {
		t.Errorf("stop button data %q: want a stop action for run %q within %d bytes", data, s.Run, maxData(e))
	}
	send(t, e, s.Completed(core.RunStopped, ""))
	flush(t, e)
	msgs = e.Messages(conv)
	if len(msgs) != 1 {
		t.Fatalf("after stop: %d messages, want 1", len(msgs))
	}
	if !strings.Contains(msgs[0].Text, "Checking the deployment history now") || !strings.Contains(strings.ToLower(msgs[0].Text), "stopped") {
		t.Errorf("after stop the draft should keep its text and say it was stopped: %q", msgs[0].Text)
	}
	if len(msgs[0].Buttons) != 0 {
		t.Errorf("Stop button left after the run ended: %v", msgs[0].Buttons)
	}
}

func maxData(e Env) int {
	if e.Limits.MaxButtonData > 0 {
		return e.Limits.MaxButtonData
	}
	return 64
}

func testToolLines(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-tools")
	send(t, e, s.Event(core.EventGenerationStart), s.Text(core.EventToken, "Let me look."),
		s.Text(core.EventGenerationComplete, "Let me look."),
		s.Tool(core.EventToolExecuting, "c1", "get_pods", `{"namespace":"prod"}`))
	flush(t, e)
	if msgs := e.Messages(conv); len(msgs) != 1 || !strings.Contains(msgs[0].Text, "get_pods namespace=prod") {
		t.Fatalf("a running tool should show its name and arguments: %+v", msgs)
	}
	send(t, e, s.Tool(core.EventToolResult, "c1", "get_pods", `{"namespace":"prod"}`),
		s.Tool(core.EventToolExecuting, "c2", "get_logs", `{"pod":"web-1"}`))
	ev := s.Tool(core.EventToolError, "c2", "get_logs", `{"pod":"web-1"}`)
	ev.Error = "pod web-1 not found"
	send(t, e, ev, s.Event(core.EventGenerationStart), s.Text(core.EventToken, "web-1 is gone."),
		s.Completed(core.RunDone, "web-1 is gone."))
	flush(t, e)
	msgs := e.Messages(conv)
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want the tool lines in the draft: %+v", len(msgs), msgs)
	}
	text := msgs[0].Text
	for _, want := range []string{"Let me look.", "✅ get_pods", "❌ get_logs", "pod web-1 not found", "web-1 is gone."} {
		if !strings.Contains(text, want) {
			t.Errorf("draft lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "get_pods") > strings.Index(text, "get_logs") || strings.Index(text, "get_logs") > strings.Index(text, "web-1 is gone.") {
		t.Errorf("draft is out of order:\n%s", text)
	}
}

func testRotation(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-long")
	maxText := e.Limits.MaxText
	answer, blocks := LongAnswer(maxText*5/2, max(3, maxText/8/40))
	send(t, e, s.Event(core.EventGenerationStart))
	send(t, e, s.Tokens(answer, 40)...)
	send(t, e, s.Text(core.EventGenerationComplete, answer), s.Completed(core.RunDone, answer))
	flush(t, e)
	msgs := e.Messages(conv)
	if want := (render.Len(answer) + maxText - 1) / maxText; len(msgs) < want || len(msgs) > want+1 {
		t.Errorf("%d messages for %d characters with a limit of %d, want %d or %d", len(msgs), render.Len(answer), maxText, want, want+1)
	}
	var texts []string
	for i, m := range msgs {
		if render.Len(m.Text) > maxText {
			t.Errorf("message %d is %d long, over the limit %d", i, render.Len(m.Text), maxText)
		}
		if len(m.Buttons) != 0 {
			t.Errorf("message %d kept buttons after completion", i)
		}
		texts = append(texts, m.Text)
	}
	CheckWhole(t, answer, blocks, texts)
}

func testWorkflowError(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-error")
	ev := s.Text(core.EventWorkflowError, "the model endpoint answered HTTP 401: check llm.api_key")
	send(t, e, s.Event(core.EventGenerationStart), s.Text(core.EventToken, "Looking"), ev, s.Completed(core.RunError, ""))
	flush(t, e)
	msgs := e.Messages(conv)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "check llm.api_key") || len(msgs[0].Buttons) != 0 {
		t.Errorf("messages = %+v, want one with the readable error and no buttons", msgs)
	}
}

func testIndependent(t *testing.T, e Env) {
	c1, c2 := e.NewConv(), e.NewConv()
	s1, s2 := NewScript(c1, "run-a"), NewScript(c2, "run-b")
	a1, a2 := sentence(30), "Second "+sentence(20)
	t1, t2 := s1.Tokens(a1, 4), s2.Tokens(a2, 4)
	for i := 0; i < max(len(t1), len(t2)); i++ {
		if i < len(t1) {
			send(t, e, t1[i])
		}
		if i < len(t2) {
			send(t, e, t2[i])
		}
	}
	send(t, e, s1.Completed(core.RunDone, a1), s2.Completed(core.RunDone, a2))
	flush(t, e)
	for conv, want := range map[string]string{c1: a1, c2: a2} {
		msgs := e.Messages(conv)
		if len(msgs) != 1 || strings.TrimSpace(msgs[0].Text) != want {
			t.Errorf("conversation %s shows %+v, want %q", conv, msgs, want)
		}
	}
}

func testIdentical(t *testing.T, e Env) {
	conv := e.NewConv()
	s := NewScript(conv, "run-same")
	answer := sentence(10)
	send(t, e, s.Event(core.EventGenerationStart))
	send(t, e, s.Tokens(answer, 8)...)
	flush(t, e)
	before := e.Calls(conv)
	send(t, e, s.Text(core.EventGenerationComplete, answer))
	flush(t, e)
	if after := e.Calls(conv); after != before {
		t.Errorf("an unchanged text was edited again: %+v -> %+v", before, after)
	}
	send(t, e, s.Completed(core.RunDone, answer))
	flush(t, e)
	if after := e.Calls(conv); after.Posts != 1 || after.Edits > before.Edits+1 {
		t.Errorf("calls %+v -> %+v: completion should need at most one edit (the Stop button goes)", before, after)
	}
}
