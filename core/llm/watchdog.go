package llm

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Cancel causes of an attempt whose server went quiet.
var (
	errNoAnswer   = errors.New("no answer within the request timeout")
	errStreamIdle = errors.New("no chunk within the stream idle timeout")
)

// watchdog cancels an attempt whose server goes quiet: RequestTimeout
// until the first chunk, StreamIdleTimeout between chunks after it. It
// cancels the attempt's context, which also aborts a read in progress.
type watchdog struct {
	timer   *time.Timer // nil when neither timeout is set
	idle    time.Duration
	started atomic.Bool // a chunk has arrived: silence is now idleness
}

func watch(cancel context.CancelCauseFunc, first, idle time.Duration) *watchdog {
	w := &watchdog{idle: idle}
	if first <= 0 && idle <= 0 {
		return w
	}
	w.timer = time.AfterFunc(first, func() {
		if w.started.Load() {
			cancel(errStreamIdle)
		} else {
			cancel(errNoAnswer)
		}
	})
	if first <= 0 {
		w.timer.Stop() // only the silence after the first chunk is bounded
	}
	return w
}

// chunk records that a chunk arrived and restarts the silence bound.
func (w *watchdog) chunk() {
	if w.timer == nil {
		return
	}
	w.started.Store(true)
	if w.idle > 0 {
		w.timer.Reset(w.idle)
	} else {
		w.timer.Stop()
	}
}

func (w *watchdog) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}
