package policy

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	limit := 3
	l := NewLimiter(func() int { return limit })
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := range 3 {
		if !l.Allow("alice", t0.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("run %d refused", i+1)
		}
	}
	if l.Allow("alice", t0.Add(10*time.Second)) {
		t.Errorf("a fourth run within the minute was allowed")
	}
	if !l.Allow("bob", t0.Add(10*time.Second)) {
		t.Errorf("bob shares alice's budget")
	}
	// Refused runs do not count: the first slot frees a minute after it.
	if !l.Allow("alice", t0.Add(time.Minute+time.Millisecond)) {
		t.Errorf("a run after the oldest left the window was refused")
	}
	if l.Allow("alice", t0.Add(time.Minute+2*time.Millisecond)) {
		t.Errorf("the window let a fourth run in")
	}
	// A reload to 0 lifts the limit.
	limit = 0
	if !l.Allow("alice", t0.Add(61*time.Second)) {
		t.Errorf("limit 0 refused a run")
	}
	// People idle for a minute are forgotten.
	limit = 3
	l.Allow("carol", t0.Add(5*time.Minute))
	l.mu.Lock()
	n := len(l.runs)
	l.mu.Unlock()
	if n != 1 {
		t.Errorf("limiter remembers %d people, want 1", n)
	}
}
