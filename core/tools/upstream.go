package tools

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
)

// dialFunc makes a new, initialized connection to u's server.
type dialFunc func(ctx context.Context, u *upstream) (*conn, error)

// upstream is one configured server and its current connection, if any.
type upstream struct {
	cfg ServerConfig
	log *slog.Logger

	// dialing admits one connect at a time; a channel rather than a mutex
	// so that a caller whose ctx ends stops waiting.
	dialing chan struct{}

	mu     sync.Mutex
	cur    *conn // nil when not connected
	closed bool
	// lastErr and since describe the state for States: the last failure
	// to connect or of a call, and when the state began.
	lastErr error
	since   time.Time
}

func newUpstream(cfg ServerConfig, log *slog.Logger) *upstream {
	return &upstream{cfg: cfg, log: log, dialing: make(chan struct{}, 1)}
}

// get returns the current connection, connecting first when there is none.
func (u *upstream) get(ctx context.Context, dial dialFunc) (*conn, error) {
	if c, err := u.current(); c != nil || err != nil {
		return c, err
	}
	select {
	case u.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("tools: connect %s: %w", u.cfg.Name, ctx.Err())
	}
	defer func() { <-u.dialing }()
	// Whoever held the slot before may have connected meanwhile.
	if c, err := u.current(); c != nil || err != nil {
		return c, err
	}

	c, err := dial(ctx, u)
	if err != nil {
		if _, cerr := u.current(); cerr != nil {
			return nil, cerr
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tools: connect %s: %w", u.cfg.Name, ctx.Err())
		}
		u.log.Warn("MCP server unavailable", "err", err)
		u.failed(err)
		return nil, &core.UnavailableError{Server: u.cfg.Name, Err: err}
	}

	u.log.Info("MCP server connected", "tools", len(c.cached()), "protocol", c.client.ProtocolVersion())
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		_ = c.close()
		return nil, errClosed
	}
	u.cur, u.lastErr, u.since = c, nil, time.Now()
	u.mu.Unlock()
	return c, nil
}

func (u *upstream) current() (*conn, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil, errClosed
	}
	return u.cur, nil
}

// fail discards c, which just failed with err, and returns the error for
// the caller. The next use connects again.
func (u *upstream) fail(c *conn, err error) error {
	u.mu.Lock()
	if u.cur == c {
		u.cur = nil
	}
	u.mu.Unlock()
	// Closing first reaps a dead child and completes its stderr.
	_ = c.close()
	err = c.withStderr(err)
	u.log.Warn("MCP server failed; it will be restarted on next use", "err", err)
	u.failed(err)
	return &core.UnavailableError{Server: u.cfg.Name, Err: err}
}

// close disconnects for good. The host's lifetime context has ended by
// now, so a connect in progress fails soon; close waits for it, because
// that connect's child process is stopped only when it gives up.
func (u *upstream) close() error {
	u.mu.Lock()
	c := u.cur
	u.cur, u.closed = nil, true
	u.mu.Unlock()
	u.dialing <- struct{}{}
	<-u.dialing
	if c == nil {
		return nil
	}
	return c.close()
}
