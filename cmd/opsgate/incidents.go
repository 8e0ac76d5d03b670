package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/incident"
	"github.com/opsgate/opsgate/internal/config"
)

// incidents is serve's intake of Alertmanager's notifications
// (docs/design.md §19) and the two mappings that join an incident's
// conversation ("incident:<hash>") to the chat thread it is shown in:
// events of the incident go to the thread; messages, stops and status
// requests from the thread go to the incident. A nil *incidents (none
// configured) maps nothing.
type incidents struct {
	svc   *incident.Service
	chats []chats.Chat
}

// newIncidents builds the intake when incidents.targets are configured
// and the store keeps incidents; the chats and the engine come later
// (attach).
func newIncidents(cfg *config.Config, store core.Store, log *slog.Logger) *incidents {
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
	return &incidents{svc: &incident.Service{
		Store: is, Targets: targets, RetriggerAfter: cfg.Incidents.RetriggerAfter,
		Log: log.With("component", "incidents"),
	}}
}

// incidentGroup names target i's approvers among the policy's groups
// (policy.Options.ScheduleApprovers).
func incidentGroup(i int) string { return fmt.Sprintf("incidents.targets[%d]", i) }

// incidentApprovers adds each target's approvers to groups.
func incidentApprovers(cfg *config.Config, groups map[string][]string) {
	for i, t := range cfg.Incidents.Targets {
		if len(t.Approvers) > 0 {
			groups[incidentGroup(i)] = t.Approvers
		}
	}
}

// place tells the policy who decides in an incident conversation: its
// target's approvers, else the approvers of the platform it is shown on.
func (in *incidents) place(convKey string) (group, platform string) {
	if in == nil || !strings.HasPrefix(convKey, incident.KeyPrefix) {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, ok := in.svc.Incident(ctx, convKey)
	if !ok {
		return "", ""
	}
	return incidentGroup(r.Target), incident.Target{To: r.To}.Platform()
}

// attach gives the intake the chats it shows incidents in and the engine
// its triage runs start on, and routes incident conversations' events
// through set to their threads. A target on a platform that is not
// enabled, or cannot show incidents, is an error naming it.
func (in *incidents) attach(cfg *config.Config, a *app, set *chats.Set) error {
	in.chats = set.Chats()
	places := map[string]incident.Place{}
	for _, c := range in.chats {
		if p, ok := c.(incident.Place); ok {
			places[c.Platform()] = p
		}
		if t, ok := c.(interface {
			SetThreads(func(ctx context.Context, convKey string) bool)
		}); ok {
			t.SetThreads(func(ctx context.Context, key string) bool { return in.svc.ConversationOf(ctx, key) != "" })
		}
	}
	for i, t := range cfg.Incidents.Targets {
		platform, _, _ := strings.Cut(t.To, ":")
		if places[platform] == nil {
			return fmt.Errorf("config: incidents.targets[%d].to: %s is not enabled", i, platform)
		}
	}
	in.svc.Places = func(platform string) incident.Place { return places[platform] }
	in.svc.Runs = &triageRuns{engine: a.engine, store: a.store}
	set.Route(incidentChat{in})
	return nil
}

// incidentChat is routed the events of incident conversations and hands
// each to the chat of the incident's thread, as that thread's.
type incidentChat struct{ in *incidents }

var _ chats.Chat = incidentChat{}

func (incidentChat) Platform() string { return "incident" }
func (incidentChat) Owns(key string) bool {
	return strings.HasPrefix(key, incident.KeyPrefix)
}
func (incidentChat) Run(ctx context.Context, _ chats.Engine) error { <-ctx.Done(); return nil }
func (incidentChat) Close() error                                  { return nil }

func (c incidentChat) Send(ctx context.Context, ev core.Event) error {
	thread := c.in.outbound(ctx, ev.ConvKey)
	if thread == ev.ConvKey {
		return fmt.Errorf("incidents: %s is shown in no thread yet (event %s)", ev.ConvKey, ev.Type)
	}
	for _, ch := range c.in.chats {
		if ch.Owns(thread) {
			ev.ConvKey = thread
			return ch.Send(ctx, ev)
		}
	}
	return fmt.Errorf("incidents: no chat serves %s, the thread of %s", thread, ev.ConvKey)
}

// chatEngine is the engine as the chat adapters get it: with incidents,
// what they pass on from an incident's thread goes to the incident, and
// a decided approval of an incident names its thread.
func (a *app) chatEngine() chats.Engine {
	if a.incidents == nil {
		return a.engine
	}
	return &incidentEngine{Engine: a.engine, in: a.incidents}
}

// incidentEngine is *core.Engine with incident threads mapped to their
// incidents; it keeps the engine's chats.Keeper ability.
type incidentEngine struct {
	*core.Engine
	in *incidents
}

var _ chats.Keeper = (*incidentEngine)(nil)

func (e *incidentEngine) Handle(ctx context.Context, m core.Inbound) error {
	m.ConvKey = e.in.inbound(ctx, m.ConvKey)
	return e.Engine.Handle(ctx, m)
}

func (e *incidentEngine) Stop(ctx context.Context, key string) bool {
	return e.Engine.Stop(ctx, e.in.inbound(ctx, key))
}

func (e *incidentEngine) Status(ctx context.Context, key string) (core.Status, error) {
	return e.Engine.Status(ctx, e.in.inbound(ctx, key))
}

func (e *incidentEngine) Decide(ctx context.Context, d core.Decision) (core.Approval, error) {
	a, err := e.Engine.Decide(ctx, d)
	// The card of an incident's approval is in the incident's thread.
	a.ConvKey = e.in.outbound(ctx, a.ConvKey)
	return a, err
}

// inbound is the conversation a chat conversation's messages go to: the
// incident it shows, else itself.
func (in *incidents) inbound(ctx context.Context, key string) string {
	if in == nil || in.svc.Places == nil || strings.HasPrefix(key, incident.KeyPrefix) {
		return key
	}
	if k := in.svc.ConversationOf(ctx, key); k != "" {
		return k
	}
	return key
}

// outbound is the chat conversation an incident is shown in, else key.
func (in *incidents) outbound(ctx context.Context, key string) string {
	if in == nil || !strings.HasPrefix(key, incident.KeyPrefix) {
		return key
	}
	if r, ok := in.svc.Incident(ctx, key); ok && r.Thread != "" {
		return r.Thread
	}
	return key
}

// triageRuns starts an incident's triage runs on the engine.
type triageRuns struct {
	engine *core.Engine
	store  core.Store
}

func (t *triageRuns) Start(ctx context.Context, convKey string, toolsets []string, in core.Inbound) error {
	if len(toolsets) > 0 {
		c := core.Conversation{Key: convKey}
		for _, name := range toolsets {
			c.Toolsets = append(c.Toolsets, core.Toolset{Name: name})
		}
		if err := t.store.Apply(ctx, core.Batch{Conversation: &c}); err != nil {
			return fmt.Errorf("load the toolsets %v: %w", toolsets, err)
		}
	}
	return t.engine.Handle(ctx, in)
}
