package slack

import (
	"context"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
)

// names caches display names, which events do not carry.
type names struct {
	mu sync.Mutex
	m  map[string]nameEntry
}

type nameEntry struct {
	name string
	at   time.Time
}

func newNames() *names { return &names{m: map[string]nameEntry{}} }

// actor returns the person with a display name: hint when the payload had
// one (slash commands and clicks do), else users.info, cached for an hour
// (ten minutes when it failed). Names are only shown, never trusted.
func (a *Adapter) actor(ctx context.Context, userID, hint string) core.Actor {
	now := time.Now()
	a.names.mu.Lock()
	if hint != "" {
		a.names.m[userID] = nameEntry{name: hint, at: now}
	}
	e, ok := a.names.m[userID]
	if len(a.names.m) > 10_000 {
		a.names.m = map[string]nameEntry{}
	}
	a.names.mu.Unlock()
	fresh := ok && (now.Sub(e.at) < time.Hour && e.name != "" || now.Sub(e.at) < 10*time.Minute)
	if !fresh {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		e = nameEntry{at: now}
		if u, err := a.api.GetUserInfoContext(ctx, userID); err == nil {
			e.name = firstNonEmpty(u.Profile.DisplayName, u.RealName, u.Name)
		} else {
			a.log.Debug("users.info failed; showing the user id", "user", userID, "err", err)
		}
		a.names.mu.Lock()
		a.names.m[userID] = e
		a.names.mu.Unlock()
	}
	if e.name == "" {
		return core.Actor{ID: userID}
	}
	return core.Actor{ID: userID, Name: "@" + e.name}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
