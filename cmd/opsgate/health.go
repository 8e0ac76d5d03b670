package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/opsgate/opsgate/core"
	"log/slog"
	"net/http"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/metrics"
)

// storeCheckTimeout bounds the store's answer to a probe.
const storeCheckTimeout = 2 * time.Second

// health serves serve's GET /healthz, /readyz and /metrics.
//
// /healthz is "the process and its store are alive": a liveness probe,
// which restarts the process when it fails. /readyz adds what this
// replica needs to be useful: every chat adapter connected to its
// platform and a model that answers. MCP servers are reported there but
// do not make a replica unready, because a dead tool server is outside
// the pod: restarting opsgate would not bring it back, and taking every
// replica out of service over one toolset would silence the rest.
type health struct {
	log   *slog.Logger
	ping  func(ctx context.Context) error // the store's
	chats *chats.Set
	model *modelProbe
	tools func() []tools.ServerState
	// live tells whether this replica can show it is alive (app.liveness).
	live func() (bool, string)
}

// component is one line of /readyz.
type component struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
	// Optional components are reported but do not decide readiness.
	Optional bool `json:"optional,omitempty"`
}

// readiness is the body of /readyz.
type readiness struct {
	Ready      bool        `json:"ready"`
	Components []component `json:"components"`
}

// routes are serve's HTTP endpoints: the adapters' (webhooks, Slack HTTP
// mode), health's, and the API with its web console. The model and tool
// states feed m too. closeStreams ends the API's open streams; the server's Shutdown would
// wait for them otherwise.
func (e *env) routes(a *app, set *chats.Set, m *metrics.Metrics) (h http.Handler, closeStreams func()) {
	hl := &health{
		log: e.log, ping: storePing(a.store), chats: set, tools: a.tools.States, live: a.liveness,
		model: &modelProbe{ping: a.model.Ping, lastAnswer: m.LastModelAnswer, now: time.Now},
	}
	m.Watch(metrics.Sources{
		Pending:    a.store.PendingSummary,
		ActiveRuns: func() int { return a.engine.Metrics().ActiveRuns },
		SendErrors: a.engine.SendErrors,
		Adapters:   hl.adapterStates,
		MCPServers: a.tools.States,
		Liveness:   func() bool { ok, _ := a.liveness(); return ok },
	})
	mux := http.NewServeMux()
	for pattern, hd := range set.Routes(a.chatEngine()) {
		mux.Handle(pattern, hd)
	}
	hl.mount(mux, m)
	closeStreams = func() {}
	if api := e.api(a, m); api != nil {
		mux.Handle(httpapi.Prefix, api)
		closeStreams = api.Close
		if a.incidents != nil {
			// Any method: the hook answers 405 itself (the console takes
			// "/" for every other path).
			mux.Handle(httpapi.HookAlertmanager, api.AlertmanagerHook(a.incidents.svc))
		}
		// The console takes every other path (404 for what it does not
		// serve, 405 for other methods). "/" rather than "GET /": the mux
		// refuses "GET /" beside the API's method-less "/api/v1/".
		mux.Handle("/", httpapi.Console())
	}
	return mux, closeStreams
}

func (h *health) mount(mux *http.ServeMux, m *metrics.Metrics) {
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /readyz", h.readyz)
	mux.Handle("GET /metrics", m.Handler(h.log))
}

func (h *health) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if c := h.store(r.Context()); !c.OK {
		h.log.Warn("health check failed", "err", c.Detail)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "store: %s\n", c.Detail)
		return
	}
	fmt.Fprintln(w, "ok")
}

func (h *health) readyz(w http.ResponseWriter, r *http.Request) {
	rep := h.check(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !rep.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		h.log.Debug("write /readyz", "err", err)
	}
}

// check asks every component: the store and the model at once, since
// either may take up to its timeout.
func (h *health) check(ctx context.Context) readiness {
	model := make(chan component, 1)
	go func() { model <- h.model.component() }()
	comps := []component{h.store(ctx)}
	if h.live != nil {
		// A replica that cannot show it is alive claims, takes up and
		// fires nothing (docs/design.md §16).
		ok, detail := h.live()
		comps = append(comps, component{Name: "liveness", OK: ok, Detail: detail})
	}
	for _, s := range h.chats.Health() {
		comps = append(comps, component{Name: "adapter:" + s.Name, OK: s.OK, Detail: s.Detail})
	}
	comps = append(comps, <-model)
	for _, s := range h.tools() {
		comps = append(comps, toolComponent(s, time.Now()))
	}
	rep := readiness{Ready: true, Components: comps}
	for _, c := range comps {
		if !c.OK && !c.Optional {
			rep.Ready = false
		}
	}
	return rep
}

func (h *health) store(ctx context.Context) component {
	ctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	defer cancel()
	if err := h.ping(ctx); err != nil {
		return component{Name: "store", Detail: err.Error()}
	}
	return component{Name: "store", OK: true}
}

// adapterStates is the metrics' view of the adapters.
func (h *health) adapterStates() []metrics.AdapterState {
	var out []metrics.AdapterState
	for _, a := range h.chats.Health() {
		out = append(out, metrics.AdapterState{Name: a.Name, Up: a.OK})
	}
	return out
}

// toolComponent describes an MCP server; a failed one is not OK, but
// optional (see health).
func toolComponent(s tools.ServerState, now time.Time) component {
	c := component{Name: "tools:" + s.Name, OK: true, Optional: true}
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

// storePing is the store's own check when it has one, else a read.
func storePing(s core.Store) func(context.Context) error {
	if p, ok := s.(pinger); ok {
		return p.Ping
	}
	return func(ctx context.Context) error {
		_, err := s.PendingSummary(ctx)
		return err
	}
}
