package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The model's part of /readyz.
const (
	// modelFresh: an answer this recent proves the endpoint works.
	modelFresh = 5 * time.Minute
	// pingCacheFor: how long a ping's result stands, so that probes of
	// every few seconds do not each call the endpoint.
	pingCacheFor = 30 * time.Second
	// pingTimeout bounds a ping, and so /readyz (set the probe's
	// timeoutSeconds above it).
	pingTimeout = 2 * time.Second
)

// modelProbe tells whether the model endpoint answers: it did within
// modelFresh, or it answers a ping (GET models) now. Concurrent probes
// share one ping.
type modelProbe struct {
	ping       func(ctx context.Context) error
	lastAnswer func() time.Time
	now        func() time.Time

	mu      sync.Mutex
	checked time.Time // when the last ping ended; zero before one
	err     error     // its result
}

func (p *modelProbe) component() component {
	c := component{Name: "model"}
	now := p.now()
	if last := p.lastAnswer(); !last.IsZero() && now.Sub(last) < modelFresh {
		c.OK, c.Detail = true, fmt.Sprintf("last answer %s ago", since(now, last))
		return c
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.checked.IsZero() || p.now().Sub(p.checked) >= pingCacheFor {
		// Not the request's context: a prober that gives up must not
		// leave a failure in the cache for everyone else.
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		p.err = p.ping(ctx)
		cancel()
		p.checked = p.now()
	}
	if p.err != nil {
		c.Detail = fmt.Sprintf("no answer in the last %s, and a ping %s ago failed: %v", modelFresh, since(p.now(), p.checked), p.err)
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("answered a ping %s ago", since(p.now(), p.checked))
	return c
}

func since(now, t time.Time) time.Duration { return max(0, now.Sub(t).Truncate(time.Second)) }
