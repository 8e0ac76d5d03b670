package slack

import (
	"sync"
	"time"
)

// dedupe remembers ids for at least ttl, in two generations so that
// memory stays bounded without a sweep.
type dedupe struct {
	mu        sync.Mutex
	ttl       time.Duration
	cur, prev map[string]struct{}
	rotated   time.Time
}

const maxDedupe = 100_000

func newDedupe(ttl time.Duration) *dedupe {
	return &dedupe{ttl: ttl, cur: map[string]struct{}{}, prev: map[string]struct{}{}, rotated: time.Now()}
}

// first reports whether the id of a kind ("event", "envelope") is seen
// for the first time, and remembers it. Without an id there is nothing to
// recognise a redelivery by: it is always first.
func (d *dedupe) first(kind, id string) bool {
	if id == "" {
		return true
	}
	id = kind + ":" + id
	d.mu.Lock()
	defer d.mu.Unlock()
	if now := time.Now(); now.Sub(d.rotated) > d.ttl || len(d.cur) > maxDedupe {
		d.prev, d.cur, d.rotated = d.cur, map[string]struct{}{}, now
	}
	if _, ok := d.cur[id]; ok {
		return false
	}
	if _, ok := d.prev[id]; ok {
		return false
	}
	d.cur[id] = struct{}{}
	return true
}
