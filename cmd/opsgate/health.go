package main

import (
	"context"
	"net/http"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/metrics"
	"github.com/opsgate/opsgate/internal/readiness"
)

// routes are serve's HTTP endpoints: the adapters' (webhooks, Slack HTTP
// mode), health's, and the API with its web console. The model and tool
// states feed m too. closeStreams ends the API's open streams; the server's Shutdown would
// wait for them otherwise.
func (e *env) routes(a *app, set *chats.Set, m *metrics.Metrics) (h http.Handler, closeStreams func()) {
	hl := &readiness.Checker{
		Log: e.log, Ping: readiness.StorePing(a.store), Chats: set, Tools: a.tools.States, Live: a.liveness,
		Model: &readiness.ModelProbe{Ping: a.model.Ping, LastAnswer: m.LastModelAnswer, Now: time.Now},
	}
	m.Watch(metrics.Sources{
		Pending:    pendingOf(a.store),
		ActiveRuns: func() int { return a.engine.Metrics().ActiveRuns },
		SendErrors: a.engine.SendErrors,
		Adapters:   hl.AdapterStates,
		MCPServers: a.tools.States,
		Liveness:   func() bool { ok, _ := a.liveness(); return ok },
	})
	mux := http.NewServeMux()
	for pattern, hd := range set.Routes(a.chatEngine()) {
		mux.Handle(pattern, hd)
	}
	hl.Mount(mux, m)
	closeStreams = func() {}
	if api := e.api(a, m); api != nil {
		mux.Handle(httpapi.Prefix, api)
		closeStreams = api.Close
		if a.incidents != nil {
			// Any method: the hook answers 405 itself (the console takes
			// "/" for every other path).
			mux.Handle(httpapi.HookAlertmanager, api.AlertmanagerHook(a.incidents.Service))
		}
		// The console takes every other path (404 for what it does not
		// serve, 405 for other methods). "/" rather than "GET /": the mux
		// refuses "GET /" beside the API's method-less "/api/v1/".
		mux.Handle("/", httpapi.Console())
	}
	return mux, closeStreams
}

// pendingOf is the store's count of waiting approvals, when it keeps one
// (both stores do).
func pendingOf(s core.Store) func(context.Context) (core.PendingSummary, error) {
	if p, ok := s.(pendingCounter); ok {
		return p.PendingSummary
	}
	return nil
}
