// Package readiness answers serve's probes: GET /healthz (the process
// and its store are alive) and GET /readyz (this replica can be useful:
// its store, its chat adapters, its model, its liveness, and its MCP
// servers, reported but not deciding), and mounts /metrics beside them.
package readiness

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/metrics"
)

// storeCheckTimeout bounds the store's answer to a probe.
const storeCheckTimeout = 2 * time.Second

// Checker serves GET /healthz, /readyz and /metrics.
//
// /healthz is "the process and its store are alive": a liveness probe,
// which restarts the process when it fails. /readyz adds what this
// replica needs to be useful: every chat adapter connected to its
// platform and a model that answers. MCP servers are reported there but
// do not make a replica unready, because a dead tool server is outside
// the pod: restarting opsgate would not bring it back, and taking every
// replica out of service over one toolset would silence the rest.
type Checker struct {
	Log *slog.Logger
	// Ping asks the store whether it answers.
	Ping func(ctx context.Context) error
	// Chats are the chat adapters (nil: none).
	Chats *chats.Set
	Model *ModelProbe
	Tools func() []tools.ServerState
	// Live tells whether this replica can show it is alive (nil: it is).
	Live func() (bool, string)
}

// Component is one line of /readyz.
type Component struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
	// Optional components are reported but do not decide readiness.
	Optional bool `json:"optional,omitempty"`
}

// Report is the body of /readyz.
type Report struct {
	Ready      bool        `json:"ready"`
	Components []Component `json:"components"`
}

// Mount serves the probes and m's /metrics on mux.
func (h *Checker) Mount(mux *http.ServeMux, m *metrics.Metrics) {
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /readyz", h.readyz)
	mux.Handle("GET /metrics", m.Handler(h.Log))
}

func (h *Checker) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if c := h.store(r.Context()); !c.OK {
		h.Log.Warn("health check failed", "err", c.Detail)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "store: %s\n", c.Detail)
		return
	}
	fmt.Fprintln(w, "ok")
}

func (h *Checker) readyz(w http.ResponseWriter, r *http.Request) {
	rep := h.check(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !rep.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		h.Log.Debug("write /readyz", "err", err)
	}
}

// check asks every component: the store and the model at once, since
// either may take up to its timeout.
func (h *Checker) check(ctx context.Context) Report {
	model := make(chan Component, 1)
	go func() { model <- h.Model.component() }()
	comps := []Component{h.store(ctx)}
	if h.Live != nil {
		// A replica that cannot show it is alive claims, takes up and
		// fires nothing (docs/design.md §16).
		ok, detail := h.Live()
		comps = append(comps, Component{Name: "liveness", OK: ok, Detail: detail})
	}
	for _, s := range h.adapters() {
		comps = append(comps, Component{Name: "adapter:" + s.Name, OK: s.OK, Detail: s.Detail})
	}
	comps = append(comps, <-model)
	for _, s := range h.Tools() {
		comps = append(comps, toolComponent(s, time.Now()))
	}
	rep := Report{Ready: true, Components: comps}
	for _, c := range comps {
		if !c.OK && !c.Optional {
			rep.Ready = false
		}
	}
	return rep
}

func (h *Checker) store(ctx context.Context) Component {
	ctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	defer cancel()
	if err := h.Ping(ctx); err != nil {
		return Component{Name: "store", Detail: err.Error()}
	}
	return Component{Name: "store", OK: true}
}

// AdapterStates is the metrics' view of the adapters.
func (h *Checker) AdapterStates() []metrics.AdapterState {
	var out []metrics.AdapterState
	for _, a := range h.adapters() {
		out = append(out, metrics.AdapterState{Name: a.Name, Up: a.OK})
	}
	return out
}

// toolComponent describes an MCP server; a failed one is not OK, but
// optional (see Checker).
func toolComponent(s tools.ServerState, now time.Time) Component {
	c := Component{Name: "tools:" + s.Name, OK: true, Optional: true}
	since := since(now, s.Since)
	switch s.Status {
	case tools.StatusNotStarted:
		c.Detail = "not started yet (servers start on first use)"
	case tools.StatusConnected:
		c.Detail = fmt.Sprintf("connected for %s", since)
	case tools.StatusFailed:
		c.OK = false
		// The error is short: a stdio child's stderr is kept as its tail.
		c.Detail = fmt.Sprintf("failed %s ago, restarted on next use: %v", since, s.Err)
	default:
		c.OK, c.Detail = false, string(s.Status)
	}
	return c
}

func (h *Checker) adapters() []chats.Health {
	if h.Chats == nil {
		return nil
	}
	return h.Chats.Health()
}

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

// ModelProbe tells whether the model endpoint answers: it did within
// modelFresh, or it answers a ping (GET models) now. Concurrent probes
// share one ping.
type ModelProbe struct {
	Ping       func(ctx context.Context) error
	LastAnswer func() time.Time
	Now        func() time.Time

	mu      sync.Mutex
	checked time.Time // when the last ping ended; zero before one
	err     error     // its result
}

func (p *ModelProbe) component() Component {
	c := Component{Name: "model"}
	now := p.Now()
	if last := p.LastAnswer(); !last.IsZero() && now.Sub(last) < modelFresh {
		c.OK, c.Detail = true, fmt.Sprintf("last answer %s ago", since(now, last))
		return c
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.checked.IsZero() || p.Now().Sub(p.checked) >= pingCacheFor {
		// Not the request's context: a prober that gives up must not
		// leave a failure in the cache for everyone else.
		ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
		p.err = p.Ping(ctx)
		cancel()
		p.checked = p.Now()
	}
	if p.err != nil {
		c.Detail = fmt.Sprintf("no answer in the last %s, and a ping %s ago failed: %v", modelFresh, since(p.Now(), p.checked), p.err)
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("answered a ping %s ago", since(p.Now(), p.checked))
	return c
}

func since(now, t time.Time) time.Duration { return max(0, now.Sub(t).Truncate(time.Second)) }
