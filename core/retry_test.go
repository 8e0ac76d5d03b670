package core_test

import (
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Issue 20 (DESIGN §16): a message is retried at most once. A run that was
// itself the retry of an interrupted run (its events carry the retry
// note) and is found interrupted again ends with an error that the
// conversation is told; the model is not called again.
func TestInterruptedRetryIsNotRetriedAgain(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	retry := core.Run{ID: "0123456789abcdef0123456789abcdef", ConvKey: conv, Requester: alice, Status: core.RunRunning, StartedAt: time.Now()}
	if err := h.store.Apply(ctx, core.Batch{ConvKey: conv, CreateRun: &retry,
		Messages: []core.Message{{Role: core.RoleUser, Content: "check the cluster", Time: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	if err := h.store.AppendEvents(ctx, []core.Event{{Type: core.EventWorkflowError, ConvKey: conv, RunID: retry.ID,
		Seq: 1, Time: time.Now(), Text: core.RetryNote, Error: core.RetryNote}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.eng.Recover(ctx, nil); err != nil {
		t.Fatal(err)
	}
	h.rec.Wait(t, 5*time.Second, 1, func(ev core.Event) bool {
		return ev.Type == core.EventWorkflowError && ev.Text == core.RetryAbandoned
	})
	waitIdle(t, h.eng)
	if n := len(h.llm.Requests()); n != 0 {
		t.Errorf("the model was called %d times for a retry interrupted again; want never", n)
	}
	got, err := h.store.Run(ctx, retry.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != core.RunError {
		t.Errorf("the interrupted retry is %s; want error", got.Status)
	}
	runs, err := h.store.UnfinishedRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 {
		t.Errorf("unfinished runs after recovery: %+v", runs)
	}
}
