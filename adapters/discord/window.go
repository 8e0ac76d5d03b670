package discord

import (
	"context"
	"sync"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
)

// window holds message writes (posts and edits) to at most n per period per
// channel, which is what Discord allows a bot before it answers 429.
// Render already spaces the edits of one draft; the window also covers a
// draft continuing in a new message, approval cards and notices that land
// in the same channel at the same moment.
type window struct {
	n      int
	period time.Duration

	mu    sync.Mutex
	calls map[string][]time.Time // the last n reserved slots per channel
	now   func() time.Time
}

func newWindow(n int, period time.Duration) *window {
	return &window{n: n, period: period, calls: map[string][]time.Time{}, now: time.Now}
}

// wait blocks until a write to ch may go and reserves it. When ctx ends
// first, nothing was sent: the error says "rate limited" so render tries
// again later rather than treating the message as maybe sent.
func (w *window) wait(ctx context.Context, ch string) error {
	at := w.reserve(ch)
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		w.release(ch, at)
		return render.RateLimited(d, false, ctx.Err())
	}
}

// reserve returns when the next write to ch may go and books that slot.
func (w *window) reserve(ch string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	slots := w.calls[ch]
	at := now
	if len(slots) >= w.n {
		if next := slots[len(slots)-w.n].Add(w.period); next.After(at) {
			at = next
		}
	}
	slots = append(slots, at)
	if len(slots) > w.n {
		slots = slots[len(slots)-w.n:]
	}
	w.calls[ch] = slots
	w.pruneLocked(now)
	return at
}

// release gives back a slot that was not used.
func (w *window) release(ch string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	slots := w.calls[ch]
	for i := len(slots) - 1; i >= 0; i-- {
		if slots[i].Equal(at) {
			w.calls[ch] = append(slots[:i:i], slots[i+1:]...)
			return
		}
	}
}

// pruneLocked forgets channels that have been quiet for a period.
func (w *window) pruneLocked(now time.Time) {
	if len(w.calls) < 1024 {
		return
	}
	for ch, slots := range w.calls {
		if len(slots) == 0 || now.Sub(slots[len(slots)-1]) > w.period {
			delete(w.calls, ch)
		}
	}
}
