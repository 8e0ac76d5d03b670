package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/llm"
)

// Issue 9 acceptance 1: a model endpoint that accepts and never answers:
// the run ends with a clear timeout message within llm.timeout plus
// retries; stop during the wait still ends it within 1 s.
func TestModelThatNeverAnswers(t *testing.T) {
	t.Run("times out", func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		h := newHarness(t, withModel(func(c *llm.Config) { c.RequestTimeout, c.StreamIdleTimeout = timeout, timeout }))
		retries := h.cfg.Retry.MaxRetries
		if retries == 0 {
			retries = 3 // the engine's default
		}
		for range retries + 1 {
			h.llm.Push(llmfake.Reply{Text: "never sent", NeverAnswer: true})
		}
		start := time.Now()
		h.say("why is checkout slow?")
		done := h.rec.WaitCompleted(t, 1)
		took := time.Since(start)
		t.Logf("completed: %s", done.Text)

		if done.Status != core.RunError {
			t.Fatalf("completed status = %s, want error; events:\n%s", done.Status, coretest.Dump(h.rec.Events()))
		}
		want := "sent no answer within 200ms (llm.timeout): check that it is up and not overloaded"
		if !strings.Contains(done.Text, want) || !strings.Contains(done.Text, h.llm.URL) {
			t.Errorf("completed text %q\nwant one naming %s and saying %q", done.Text, h.llm.URL, want)
		}
		transients := 0
		for _, ev := range h.rec.Events() {
			if ev.Type == core.EventTransientError {
				transients++
			}
		}
		if n := len(h.llm.Requests()); n != retries+1 || transients != retries {
			t.Errorf("%d requests and %d transient_error events, want %d and %d", n, transients, retries+1, retries)
		}
		// Every attempt waited out its timeout; the whole run took about
		// that plus the (millisecond) backoffs, with room for a loaded machine.
		attempts := time.Duration(retries+1) * timeout
		if took < attempts || took > attempts+5*time.Second {
			t.Errorf("the run took %v, want about %v", took, attempts)
		}
	})
	t.Run("stop during the wait", func(t *testing.T) {
		// The default llm.timeout: only the stop can end the wait in time.
		h := newHarness(t, withModel(func(c *llm.Config) { c.RequestTimeout, c.StreamIdleTimeout = time.Minute, time.Minute }))
		h.llm.Push(llmfake.Reply{Text: "never sent", NeverAnswer: true})
		h.say("why is checkout slow?")
		if got := h.llm.WaitRequests(1, 10*time.Second); len(got) != 1 {
			t.Fatal("the model request never arrived")
		}
		start := time.Now()
		if !h.eng.Stop(context.Background(), conv) {
			t.Fatal("Stop found nothing to stop")
		}
		done := h.rec.WaitCompleted(t, 1)
		if took := time.Since(start); took > stopBound {
			t.Errorf("stop took %v, want within %v", took, stopBound)
		}
		if done.Status != core.RunStopped {
			t.Fatalf("completed status = %s, want stopped", done.Status)
		}
	})
}

// Issue 9 acceptance 2: a stream that stalls after 3 tokens: the attempt
// ends after llm.stream_idle_timeout; the user sees the error; no partial
// answer is stored as complete.
func TestStreamThatStallsAfterThreeTokens(t *testing.T) {
	h := newHarness(t, withModel(func(c *llm.Config) { c.RequestTimeout, c.StreamIdleTimeout = time.Minute, 200*time.Millisecond }))
	const answer = "Scaling web to five replicas now."
	h.llm.Push(llmfake.Reply{Text: answer, StallAfterTokens: 3})
	h.say("scale web to 5")
	done := h.rec.WaitCompleted(t, 1)
	t.Logf("completed: %s", done.Text)

	var streamed strings.Builder
	for _, ev := range h.rec.RunEvents(done.RunID) {
		if ev.Type == core.EventToken {
			streamed.WriteString(ev.Text)
		}
	}
	const partial = "Scaling web to "
	if streamed.String() != partial {
		t.Fatalf("streamed %q, want the three tokens %q", streamed.String(), partial)
	}
	want := "the model stream went silent for 200ms (llm.stream_idle_timeout) after 3 tokens; the answer is incomplete"
	if done.Status != core.RunError || !strings.Contains(done.Text, want) {
		t.Fatalf("completed = %s %q, want error saying %q", done.Status, done.Text, want)
	}
	werr := h.rec.Wait(t, time.Second, 1, coretest.Of(core.EventWorkflowError))
	if !strings.Contains(werr.Error, want) {
		t.Errorf("workflow.error = %q", werr.Error)
	}
	// The user saw part of an answer: it is not asked for again.
	if n := len(h.llm.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (no retry after output)", n)
	}

	ctx := context.Background()
	run, err := h.store.Run(ctx, done.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != core.RunError || !strings.Contains(run.Error, want) {
		t.Errorf("stored run: status %s, error %q", run.Status, run.Error)
	}
	msgs, err := h.store.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == core.RoleAssistant && strings.Contains(m.Content, "Scaling web") {
			t.Errorf("the partial answer was stored as an answer: %+v", m)
		}
	}
	// Nor does the model see it as its own answer on the next turn.
	h.llm.Push(text("Scaled web to 5."))
	h.say("try again")
	if next := h.rec.WaitCompleted(t, 2); next.Status != core.RunDone {
		t.Fatalf("next run = %+v", next)
	}
	for _, m := range h.llm.Requests()[1].Messages {
		if m.Role == "assistant" && strings.Contains(m.Content, "Scaling web") {
			t.Errorf("the next request has the partial answer as the model's: %+v", m)
		}
	}
}
