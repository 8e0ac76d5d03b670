package render_test

import (
	"context"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
)

func TestLimiterBackoffPerKey(t *testing.T) {
	l := render.NewLimiter(render.LimiterConfig{Rate: 100})
	l.Backoff("chat-1", 200*time.Millisecond, false)
	if d := l.Delay("chat-1", render.Urgent); d < 150*time.Millisecond {
		t.Errorf("chat-1 delay = %s, want about 200ms", d)
	}
	if d := l.Delay("chat-2", render.Urgent); d != 0 {
		t.Errorf("chat-2 delay = %s, want 0: a chat's retry-after is its own", d)
	}
	start := time.Now()
	if err := l.Wait(context.Background(), "chat-1", render.Urgent); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("Wait returned after %s, before the retry-after", el)
	}
	l.Backoff("chat-1", 150*time.Millisecond, true)
	if d := l.Delay("chat-2", render.Urgent); d < 100*time.Millisecond {
		t.Errorf("a global retry-after must hold every chat: delay %s", d)
	}
}

func TestLimiterReserveForUrgent(t *testing.T) {
	l := render.NewLimiter(render.LimiterConfig{Rate: 1, Burst: 10, Reserve: 0.3})
	low := 0
	for l.Allow("k", render.Low) {
		low++
	}
	if low != 7 {
		t.Errorf("low-priority calls got %d of a burst of 10, want 7 (30%% reserved)", low)
	}
	if !l.Allow("k", render.Urgent) {
		t.Error("urgent call refused while the reserve is available")
	}
	if p := l.Pressure(); p < 0.7 {
		t.Errorf("pressure = %.2f, want high", p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := l.Wait(ctx, "k", render.Low); err == nil {
		t.Error("Wait with an empty bucket returned before its context ended")
	}
}
