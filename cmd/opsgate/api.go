package main

import (
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/adapters/httpapi/apimemory"
	"github.com/opsgate/opsgate/core/schedule"
	"github.com/opsgate/opsgate/core/timeline"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/internal/metrics"
)

// api is the HTTP API over the app (docs/design.md §15), or nil when the store
// cannot serve it (a store in a test). Its responses pass the same
// redactor as everything the chats show; its decisions are counted in m
// like the chats' clicks.
func (e *env) api(a *app, m *metrics.Metrics) *httpapi.API {
	store, ok := a.store.(httpapi.Store)
	tokens, ok2 := a.store.(httpapi.TokenStore)
	if !ok || !ok2 {
		e.log.Warn("the store cannot serve the HTTP API; /api/v1 is off")
		return nil
	}
	o := httpapi.Options{
		Store: store, Tokens: tokens, Engine: a.engine, Redact: a.red.String,
		Schedules: func() []httpapi.Schedule { return apiSchedules(a.cfg, time.Now()) },
		Logger:    e.log.With("component", "httpapi"),
		Decided:   func(err error) { m.Decided("api", err) },
	}
	if a.policy != nil {
		o.Visibility = a.policy
	}
	if a.memory != nil {
		o.Memory = apimemory.Searcher(a.memory)
	}
	if src, ok := timelineSource(a.store); ok {
		o.Alerts = src.(timeline.Alerts)
	}
	return httpapi.New(o)
}

// apiSchedules lists the configured schedules with their next fire.
func apiSchedules(cfg *config.Config, now time.Time) []httpapi.Schedule {
	out := make([]httpapi.Schedule, 0, len(cfg.Schedules))
	for _, s := range cfg.Schedules {
		as := httpapi.Schedule{Name: s.Name, Cron: s.Cron, Target: s.Target, Prompt: s.Prompt}
		if spec, err := schedule.Parse(s.Cron); err == nil {
			as.Next = spec.Next(now)
		}
		out = append(out, as)
	}
	return out
}
