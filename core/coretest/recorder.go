package coretest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Recorder is a core.EventSender that keeps every event, for assertions.
type Recorder struct {
	mu     sync.Mutex
	events []core.Event
	wake   chan struct{}
}

var _ core.EventSender = (*Recorder)(nil)

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{wake: make(chan struct{})} }

// Send records ev.
func (r *Recorder) Send(_ context.Context, ev core.Event) error {
	r.mu.Lock()
	r.events = append(r.events, ev)
	close(r.wake)
	r.wake = make(chan struct{})
	r.mu.Unlock()
	return nil
}

// Events returns a copy of everything recorded so far.
func (r *Recorder) Events() []core.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.Event(nil), r.events...)
}

// RunEvents returns the events of one run.
func (r *Recorder) RunEvents(runID string) []core.Event {
	var out []core.Event
	for _, ev := range r.Events() {
		if ev.RunID == runID {
			out = append(out, ev)
		}
	}
	return out
}

// Wait returns the n-th (1-based) event matching match, waiting up to
// timeout; it fails the test on timeout and prints what was recorded.
func (r *Recorder) Wait(t testing.TB, timeout time.Duration, n int, match func(core.Event) bool) core.Event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		seen := 0
		for _, ev := range r.events {
			if match(ev) {
				seen++
				if seen == n {
					r.mu.Unlock()
					return ev
				}
			}
		}
		wake := r.wake
		r.mu.Unlock()
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("timed out after %v waiting for event #%d; recorded:\n%s", timeout, n, Dump(r.Events()))
			return core.Event{}
		}
	}
}

// WaitCompleted waits for the n-th completed event.
func (r *Recorder) WaitCompleted(t testing.TB, n int) core.Event {
	t.Helper()
	return r.Wait(t, 10*time.Second, n, func(ev core.Event) bool { return ev.Type == core.EventCompleted })
}

// Of returns a matcher for an event type.
func Of(typ core.EventType) func(core.Event) bool {
	return func(ev core.Event) bool { return ev.Type == typ }
}

// Types lists the types of events, skipping the noisy streaming ones
// (token, thinking, ttft) so that sequences can be compared.
func Types(evs []core.Event) []core.EventType {
	var out []core.EventType
	for _, ev := range evs {
		switch ev.Type {
		case core.EventToken, core.EventThinking, core.EventTTFT:
			continue
		}
		out = append(out, ev.Type)
	}
	return out
}

// Dump renders events one per line for failure messages.
func Dump(evs []core.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "  %s #%d %s", ev.RunID[:min(8, len(ev.RunID))], ev.Seq, ev.Type)
		if ev.Call != nil {
			fmt.Fprintf(&b, " call=%s(%s)", ev.Call.Name, ev.Call.Arguments)
		}
		if ev.Status != "" {
			fmt.Fprintf(&b, " status=%s", ev.Status)
		}
		if ev.Text != "" && ev.Type != core.EventToken {
			fmt.Fprintf(&b, " text=%q", core.Truncate(ev.Text, 120, core.Bytes))
		}
		if ev.Error != "" {
			fmt.Fprintf(&b, " error=%q", core.Truncate(ev.Error, 160, core.Bytes))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
