// Package incidentthreads shows incidents in chat threads (docs/design.md
// §19): it gives the Alertmanager intake (core/incident) the chats it
// posts in and the engine its triage runs start on, and keeps the two
// mappings that join an incident's conversation ("incident:<hash>") to the
// chat thread it is shown in: events of the incident go to the thread;
// messages, stops and status requests from the thread go to the incident.
// A nil *Threads (no incidents configured) maps nothing.
package incidentthreads

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/incident"
)

// Threads joins the incidents of Service to the chats' threads.
type Threads struct {
	Service *incident.Service
	chats   []chats.Chat
}

// Group names target i's approvers among the policy's groups
// (policy.Options.ScheduleApprovers).
func Group(i int) string { return fmt.Sprintf("incidents.targets[%d]", i) }

// Place tells the policy who decides in an incident conversation: its
// target's approvers, else the approvers of the platform it is shown on.
func (in *Threads) Place(convKey string) (group, platform string) {
	if in == nil || !strings.HasPrefix(convKey, incident.KeyPrefix) {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, ok := in.Service.Incident(ctx, convKey)
	if !ok {
		return "", ""
	}
	return Group(r.Target), incident.Target{To: r.To}.Platform()
}

// Applier stores a batch (core.Store's Apply): a triage run's toolsets.
type Applier interface {
	Apply(ctx context.Context, b core.Batch) error
}

// Attach gives the intake the chats it shows incidents in and the engine
// its triage runs start on, and routes incident conversations' events
// through set to their threads. A target on a platform that is not
// enabled, or cannot show incidents, is an error naming it.
func (in *Threads) Attach(set *chats.Set, engine *core.Engine, store Applier) error {
	in.chats = set.Chats()
	places := map[string]incident.Place{}
	for _, c := range in.chats {
		if p, ok := c.(incident.Place); ok {
			places[c.Platform()] = p
		}
		if t, ok := c.(interface {
			SetThreads(func(ctx context.Context, convKey string) bool)
		}); ok {
			t.SetThreads(func(ctx context.Context, key string) bool { return in.Service.ConversationOf(ctx, key) != "" })
		}
	}
	for i, t := range in.Service.Targets {
		platform, _, _ := strings.Cut(t.To, ":")
		if places[platform] == nil {
			return fmt.Errorf("config: incidents.targets[%d].to: %s is not enabled", i, platform)
		}
	}
	in.Service.Places = func(platform string) incident.Place { return places[platform] }
	in.Service.Runs = &triageRuns{engine: engine, store: store}
	set.Route(incidentChat{in})
	return nil
}

// Engine is the engine as the chat adapters get it: with incidents, what
// they pass on from an incident's thread goes to the incident, and a
// decided approval of an incident names its thread.
func (in *Threads) Engine(e *core.Engine) chats.Engine {
	if in == nil {
		return e
	}
	return &incidentEngine{Engine: e, in: in}
}

// incidentChat is routed the events of incident conversations and hands
// each to the chat of the incident's thread, as that thread's.
type incidentChat struct{ in *Threads }

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

// incidentEngine is *core.Engine with incident threads mapped to their
// incidents; it keeps the engine's chats.Keeper ability.
type incidentEngine struct {
	*core.Engine
	in *Threads
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
func (in *Threads) inbound(ctx context.Context, key string) string {
	if in == nil || in.Service.Places == nil || strings.HasPrefix(key, incident.KeyPrefix) {
		return key
	}
	if k := in.Service.ConversationOf(ctx, key); k != "" {
		return k
	}
	return key
}

// outbound is the chat conversation an incident is shown in, else key.
func (in *Threads) outbound(ctx context.Context, key string) string {
	if in == nil || !strings.HasPrefix(key, incident.KeyPrefix) {
		return key
	}
	if r, ok := in.Service.Incident(ctx, key); ok && r.Thread != "" {
		return r.Thread
	}
	return key
}

// triageRuns starts an incident's triage runs on the engine.
type triageRuns struct {
	engine *core.Engine
	store  Applier
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
