package policy

import (
	"sync"
	"time"
)

// Limiter enforces limits.runs_per_person_per_minute: at most that many
// runs per person in any sliding minute. Runs it refuses do not count.
// It is safe for concurrent use.
type Limiter struct {
	limit func() int

	mu        sync.Mutex
	runs      map[string][]time.Time // per person, oldest first, within the last minute
	lastSweep time.Time
}

// NewLimiter limits to limit() runs per person per minute, asked on each
// call (Holder.RunsPerPersonPerMinute follows reloads); 0 or less means no
// limit.
func NewLimiter(limit func() int) *Limiter {
	return &Limiter{limit: limit, runs: map[string][]time.Time{}}
}

// Limit is the limit now (0: none).
func (l *Limiter) Limit() int { return l.limit() }

// Allow records a run of person at now and reports whether it may start.
// person is a person as core.Policy.Person folds it, so one person's
// platforms share one budget.
func (l *Limiter) Allow(person string, now time.Time) bool {
	n := l.limit()
	if n <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	since := now.Add(-time.Minute)
	if now.Sub(l.lastSweep) > time.Minute {
		// Forget people who have not run in the last minute, so that the
		// map does not grow with everyone who ever asked.
		for p, ts := range l.runs {
			if len(ts) == 0 || !ts[len(ts)-1].After(since) {
				delete(l.runs, p)
			}
		}
		l.lastSweep = now
	}
	ts := l.runs[person]
	i := 0
	for i < len(ts) && !ts[i].After(since) {
		i++
	}
	ts = ts[i:]
	if len(ts) >= n {
		l.runs[person] = ts
		return false
	}
	l.runs[person] = append(ts, now)
	return true
}
