package main

import (
	"log/slog"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/chats/incidentthreads"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/incident"
	"github.com/opsgate/opsgate/internal/config"
)

// newIncidents builds serve's intake of Alertmanager's notifications
// (docs/design.md §19), shown in chat threads by incidentthreads, when
// incidents.targets are configured and the store keeps incidents; the
// chats and the engine come later (Attach).
func newIncidents(cfg *config.Config, store core.Store, log *slog.Logger) *incidentthreads.Threads {
	is, ok := store.(incident.Store)
	if !cfg.Incidents.On() || !ok {
		return nil
	}
	targets := make([]incident.Target, len(cfg.Incidents.Targets))
	for i, t := range cfg.Incidents.Targets {
		targets[i] = incident.Target{Match: t.Match, To: t.To, Approvers: t.Approvers, Toolsets: t.Toolsets, Triage: t.Triage}
		if targets[i].Triage == "" {
			targets[i].Triage = config.DefaultTriage
		}
	}
	return &incidentthreads.Threads{Service: &incident.Service{
		Store: is, Targets: targets, RetriggerAfter: cfg.Incidents.RetriggerAfter,
		Log: log.With("component", "incidents"),
	}}
}

// incidentApprovers adds each target's approvers to groups.
func incidentApprovers(cfg *config.Config, groups map[string][]string) {
	for i, t := range cfg.Incidents.Targets {
		if len(t.Approvers) > 0 {
			groups[incidentthreads.Group(i)] = t.Approvers
		}
	}
}

// chatEngine is the engine as the chat adapters get it, incident threads
// mapped to their incidents (incidentthreads.Threads.Engine).
func (a *app) chatEngine() chats.Engine { return a.incidents.Engine(a.engine) }
