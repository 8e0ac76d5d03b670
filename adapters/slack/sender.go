package slack

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
	"github.com/slack-go/slack"
)

// Sender renders the runs of Slack conversations: it is the adapter's
// core.EventSender (wire it into the engine's deps). Send never blocks on
// Slack; see package render. It is safe for concurrent use.
type Sender struct {
	r        *render.Sender
	p        *platform
	confirms *confirms

	mu sync.Mutex
	// byChannel indexes the conversations with a run going or paused, for
	// "/opsgate stop" and "/opsgate status", which come without a thread.
	byChannel map[string]map[string]time.Time
}

var _ core.EventSender = (*Sender)(nil)

func newSender(api *slack.Client, cfg Config, log *slog.Logger) *Sender {
	c := &confirms{}
	p := &platform{api: api, confirms: c, limits: render.Limits{
		MaxText: MaxText, MinEditInterval: cfg.MinEditInterval, FirstSendDebounce: cfg.FirstSendDebounce, MaxButtonData: 100,
	}}
	return &Sender{
		r:         render.New(p, render.Options{Limiter: cfg.Limiter, Logger: log}),
		p:         p,
		confirms:  c,
		byChannel: map[string]map[string]time.Time{},
	}
}

// Send implements core.EventSender.
func (s *Sender) Send(ctx context.Context, ev core.Event) error {
	if ev.Approval != nil {
		switch ev.Type {
		case core.EventToolAwaitingApproval, core.EventToolApproved, core.EventToolDenied:
			s.confirms.note(*ev.Approval)
		}
	}
	s.track(ev)
	return s.r.Send(ctx, ev)
}

// track keeps byChannel: a run's conversation is in it from its first
// event until it completes (a pause for approval keeps it).
func (s *Sender) track(ev core.Event) {
	_, ch, _, ok := parseKey(ev.ConvKey)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	convs := s.byChannel[ch]
	if ev.Type == core.EventCompleted && ev.Status != core.RunAwaitingApproval {
		delete(convs, ev.ConvKey)
		if len(convs) == 0 {
			delete(s.byChannel, ch)
		}
		return
	}
	if convs == nil {
		convs = map[string]time.Time{}
		s.byChannel[ch] = convs
	}
	now := time.Now()
	convs[ev.ConvKey] = now
	for k, at := range convs {
		if now.Sub(at) > 24*time.Hour {
			delete(convs, k)
		}
	}
}

// convsIn returns the conversations of a channel with a run going or
// paused, most recent first.
func (s *Sender) convsIn(channel string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.byChannel[channel] {
		keys = append(keys, k)
	}
	at := s.byChannel[channel]
	sort.Slice(keys, func(i, j int) bool { return at[keys[i]].After(at[keys[j]]) })
	return keys
}

// Resolve shows a decided approval on its card (the message ts the click
// came from) at once; see render.Sender.Resolve.
func (s *Sender) Resolve(a core.Approval, cardTS string) {
	s.confirms.note(a)
	s.r.Resolve(a, render.MsgRef(cardTS))
}

// Say posts a notice (Markdown) to a conversation, in order with its runs.
func (s *Sender) Say(conv, markdown string) { s.r.Say(conv, markdown) }

// Flush waits until everything sent so far is delivered (or given up on).
func (s *Sender) Flush(ctx context.Context) error { return s.r.Flush(ctx) }

// Stats counts the Slack calls made for rendering.
func (s *Sender) Stats() render.Stats { return s.r.Stats() }

// Limits are the rendering limits used for Slack.
func (s *Sender) Limits() render.Limits { return s.p.Limits() }

// Close delivers what is pending until ctx ends, then stops.
func (s *Sender) Close(ctx context.Context) error { return s.r.Close(ctx) }

// Card shows approval a as a card of its own in conversation key (see
// render.Sender.Card).
func (s *Sender) Card(key string, a core.Approval) {
	s.confirms.note(a)
	s.r.Card(key, a)
}
