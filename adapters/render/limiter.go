package render

import (
	"context"
	"sync"
	"time"
)

// Priority orders calls competing for a tight budget.
type Priority int

// Priorities. Urgent calls (final answers, approval cards, notices) may use
// the whole burst; streaming edits leave a reserve for them and simply wait,
// which coalesces more text into the next edit.
const (
	Low Priority = iota
	Urgent
)

// LimiterConfig tunes a Limiter. The zero value means the defaults.
type LimiterConfig struct {
	// Rate is the sustained number of calls per second for the bot token
	// (default 25: Telegram allows about 30).
	Rate float64
	// Burst is how many calls may go at once after a quiet period (default Rate).
	Burst float64
	// Reserve is the part of the burst only Urgent calls may use (default 0.2).
	Reserve float64
}

// Limiter is the outbound budget of one bot token, shared by every
// conversation (and schedules) that post with that token. It is a token
// bucket plus the platform's retry-after, which blocks either one key (a
// chat) or everything. It is safe for concurrent use.
type Limiter struct {
	mu          sync.Mutex
	rate        float64
	burst       float64
	reserve     float64
	tokens      float64
	last        time.Time
	globalUntil time.Time
	keyUntil    map[string]time.Time
	now         func() time.Time
}

// NewLimiter returns a limiter with a full bucket.
func NewLimiter(cfg LimiterConfig) *Limiter {
	if cfg.Rate <= 0 {
		cfg.Rate = 25
	}
	if cfg.Burst <= 0 {
		cfg.Burst = cfg.Rate
	}
	if cfg.Reserve <= 0 || cfg.Reserve >= 1 {
		cfg.Reserve = 0.2
	}
	return &Limiter{
		rate: cfg.Rate, burst: cfg.Burst, reserve: cfg.Reserve * cfg.Burst,
		tokens: cfg.Burst, keyUntil: map[string]time.Time{}, now: time.Now,
	}
}

// Wait blocks until a call for key may go, and takes its budget.
func (l *Limiter) Wait(ctx context.Context, key string, p Priority) error {
	for {
		d := l.take(key, p, true)
		if d == 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Allow takes the budget for a call for key only if it is available now.
// Typing indicators use it: they are worth nothing late.
func (l *Limiter) Allow(key string, p Priority) bool {
	return l.take(key, p, true) == 0
}

// Delay returns how long a call for key would wait now, without taking
// anything.
func (l *Limiter) Delay(key string, p Priority) time.Duration {
	return l.take(key, p, false)
}

// Backoff records the platform's retry-after: no call for key (or, when
// global, for any key) goes before d has passed.
func (l *Limiter) Backoff(key string, d time.Duration, global bool) {
	if d <= 0 {
		d = time.Second
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	until := now.Add(d)
	if global {
		if until.After(l.globalUntil) {
			l.globalUntil = until
		}
		return
	}
	if until.After(l.keyUntil[key]) {
		l.keyUntil[key] = until
	}
	for k, u := range l.keyUntil {
		if u.Before(now) {
			delete(l.keyUntil, k)
		}
	}
}

// Pressure is how much of the burst is used, from 0 (idle) to 1 (empty
// bucket or a global retry-after in force). Drafts stretch their edit
// interval with it.
func (l *Limiter) Pressure() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.refill(now)
	if now.Before(l.globalUntil) {
		return 1
	}
	p := 1 - l.tokens/l.burst
	if p < 0 {
		return 0
	}
	return p
}

// take returns 0 after taking the budget (when consume is set), or how long
// to wait before trying again.
func (l *Limiter) take(key string, p Priority, consume bool) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.refill(now)
	var wait time.Duration
	if d := l.globalUntil.Sub(now); d > wait {
		wait = d
	}
	if d := l.keyUntil[key].Sub(now); d > wait {
		wait = d
	}
	if wait > 0 {
		return wait
	}
	need := 1.0
	if p == Low {
		need += l.reserve
	}
	if l.tokens < need {
		d := time.Duration((need - l.tokens) / l.rate * float64(time.Second))
		if d < time.Millisecond {
			d = time.Millisecond
		}
		return d
	}
	if consume {
		l.tokens--
	}
	return 0
}

func (l *Limiter) refill(now time.Time) {
	if !l.last.IsZero() {
		l.tokens += now.Sub(l.last).Seconds() * l.rate
		if l.tokens > l.burst {
			l.tokens = l.burst
		}
	}
	l.last = now
}
