package tools

import (
	"errors"
	"time"
)

// Status is the state of a server's connection as the Host knows it.
type Status string

// Server states.
const (
	// StatusNotStarted: nothing has used the server yet (servers start on
	// first use), or it was stopped after use without failing.
	StatusNotStarted Status = "not_started"
	// StatusConnected: a connection is up and answered its last request.
	StatusConnected Status = "connected"
	// StatusFailed: the last start, or a call on the last connection,
	// failed; the next use starts the server again.
	StatusFailed Status = "failed"
	// StatusClosed: the Host was closed.
	StatusClosed Status = "closed"
)

// ServerState is one server's state for health reports and metrics.
type ServerState struct {
	Name   string
	Status Status
	// Err is why the server failed (StatusFailed only), with the tail of
	// a stdio child's stderr.
	Err error
	// Since is when the server entered Status (zero when not started).
	Since time.Time
}

// States reports every configured server's state, in configuration order.
// It only reads what the Host already knows: it starts nothing and sends
// nothing, so a server that died since its last use still shows connected
// until the next call finds out.
func (h *Host) States() []ServerState {
	out := make([]ServerState, 0, len(h.order))
	for _, name := range h.order {
		out = append(out, h.upstreams[name].state())
	}
	return out
}

func (u *upstream) state() ServerState {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := ServerState{Name: u.cfg.Name, Status: StatusNotStarted, Since: u.since}
	switch {
	case u.closed:
		st.Status = StatusClosed
	case u.cur != nil:
		st.Status = StatusConnected
	case u.lastErr != nil:
		st.Status, st.Err = StatusFailed, u.lastErr
	}
	return st
}

// failed records err as the reason the server is down, unless another
// connection has come up meanwhile. Errors of a closing Host are not
// failures of the server.
func (u *upstream) failed(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cur != nil || u.closed || errors.Is(err, errClosed) {
		return
	}
	u.lastErr, u.since = err, time.Now()
}
