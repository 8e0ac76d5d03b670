package render

import (
	"fmt"
	"sync"
	"time"
)

// Link tracks an adapter's connection to its platform for health checks
// (a Telegram poll, a Slack socket, a Discord gateway): up since the last
// success, or down since the first failure after it. Every adapter reports
// its Health through one so that /readyz reads the same on every platform.
// It is safe for concurrent use.
type Link struct {
	what string // the connection, for details: "getUpdates", "gateway"
	now  func() time.Time

	mu     sync.Mutex
	up     bool
	since  time.Time // when up or down began; zero before anything happened
	lastOK time.Time
	err    string
}

// NewLink returns a link that is not connected yet; what names the
// connection in details.
func NewLink(what string) *Link { return &Link{what: what, now: time.Now} }

// Up records a success.
func (l *Link) Up() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.up {
		l.up, l.since, l.err = true, now, ""
	}
	l.lastOK = now
}

// Down records a failure; err says why (it must not carry secrets).
func (l *Link) Down(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.up || l.since.IsZero() {
		l.up, l.since = false, l.now()
	}
	l.err = "unknown error"
	if err != nil {
		l.err = err.Error()
	}
}

// Health reports whether the link is up. maxSilence, when positive, also
// counts it down when no success came for that long (a connection that
// hangs without failing). The detail says for how long and why.
func (l *Link) Health(maxSilence time.Duration) (ok bool, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	switch {
	case l.since.IsZero():
		return false, l.what + ": not connected yet"
	case !l.up && l.lastOK.IsZero():
		return false, fmt.Sprintf("%s: not connected yet, failing for %s: %s", l.what, ago(now, l.since), l.err)
	case !l.up:
		return false, fmt.Sprintf("%s failing for %s: %s", l.what, ago(now, l.since), l.err)
	case maxSilence > 0 && now.Sub(l.lastOK) > maxSilence:
		return false, fmt.Sprintf("%s: no answer for %s", l.what, ago(now, l.lastOK))
	}
	return true, fmt.Sprintf("%s ok for %s", l.what, ago(now, l.since))
}

// ago is a duration for people: whole seconds, at least 0s.
func ago(now, t time.Time) time.Duration {
	return max(0, now.Sub(t).Truncate(time.Second))
}
