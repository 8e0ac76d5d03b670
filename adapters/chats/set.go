package chats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/opsgate/opsgate/core"
)

// Set is the chat adapters one process runs, and the targets its events
// are routed to. Build it with the adapters before the engine (which needs
// them as subscribers); set its fields before Routes and Run, which hand
// the adapters the engine. Its methods are safe for concurrent use once
// it runs.
type Set struct {
	// Options are the engine's additions for every adapter ([As]).
	Options Options
	// Leaser, when set, holds the leases of [Leased] adapters; without it
	// (a store that cannot lease) they run unleased.
	Leaser core.Leaser
	// Logger logs the leases (default slog.Default()).
	Logger *slog.Logger

	// run are the adapters Run runs, Close closes and Health reports.
	run []*member
	// routed are run's adapters and those only routed to (Route).
	routed []Chat
}

// member is an adapter of the set and its lease state.
type member struct {
	c Chat
	// lease names the lease its Run needs ("" none), standby is true while
	// another replica holds it; both are set by Run.
	lease   atomic.Pointer[string]
	standby atomic.Bool
}

// NewSet returns the set of chats; it starts nothing.
func NewSet(chats ...Chat) *Set {
	s := &Set{}
	for _, c := range chats {
		s.run = append(s.run, &member{c: c})
		s.routed = append(s.routed, c)
	}
	return s
}

// Route adds a chat the set routes events and schedule fires to but
// neither runs, closes nor reports (the log target of schedules).
func (s *Set) Route(c Chat) { s.routed = append(s.routed, c) }

// Chats are the adapters the set runs, in order.
func (s *Set) Chats() []Chat {
	out := make([]Chat, len(s.run))
	for i, m := range s.run {
		out[i] = m.c
	}
	return out
}

// Names are the platforms of the adapters the set runs, in order.
func (s *Set) Names() []string {
	names := make([]string, len(s.run))
	for i, m := range s.run {
		names[i] = m.c.Platform()
	}
	return names
}

// named returns the routed chat of platform, or nil.
func (s *Set) named(platform string) Chat {
	for _, c := range s.routed {
		if c.Platform() == platform {
			return c
		}
	}
	return nil
}

// Owns reports whether some routed chat serves the conversation.
func (s *Set) Owns(key string) bool {
	for _, c := range s.routed {
		if c.Owns(key) {
			return true
		}
	}
	return false
}

// Subscribe subscribes each routed chat to the events of the
// conversations it owns (the engine made them safe to show). An event of
// a conversation no chat serves and served does not claim (an approval of
// a bot that is no longer configured expiring) is an error: nobody will
// see it, and the engine logs and counts it as undelivered. Approvals
// with notify targets are also shown there (Notify).
func (s *Set) Subscribe(e *core.Engine, served func(key string) bool) {
	for _, c := range s.routed {
		e.Subscribe("", c, core.SubscribeOptions{Owns: c.Owns})
	}
	owned := func(key string) bool { return s.Owns(key) || (served != nil && served(key)) }
	e.Subscribe("", core.SenderFunc(func(_ context.Context, ev core.Event) error {
		return fmt.Errorf("serve: no adapter serves conversation %q (event %s)", ev.ConvKey, ev.Type)
	}), core.SubscribeOptions{Owns: func(key string) bool { return !owned(key) }})
	e.Subscribe("", core.SenderFunc(s.Notify), core.SubscribeOptions{})
}

// Routes are the HTTP handlers of the adapters that receive over HTTP
// ([Router]), by ServeMux pattern, handing what they receive to e as
// their platform's engine.
func (s *Set) Routes(e Engine) map[string]http.Handler {
	out := map[string]http.Handler{}
	for _, m := range s.run {
		r, ok := m.c.(Router)
		if !ok {
			continue
		}
		for pattern, h := range r.Routes(As(m.c.Platform(), e, s.Options)) {
			out[pattern] = h
		}
	}
	return out
}

// Health is one adapter's connection to its platform.
type Health struct {
	Name   string
	OK     bool
	Detail string
}

// Health reports every adapter's connection; a standby (another replica
// holds its lease) is ready.
func (s *Set) Health() []Health {
	out := make([]Health, len(s.run))
	for i, m := range s.run {
		h := Health{Name: m.c.Platform()}
		if l := m.lease.Load(); l != nil && m.standby.Load() {
			h.OK, h.Detail = true, "standby: another replica holds the "+*l+" lease"
		} else {
			h.OK, h.Detail = HealthOf(m.c)
		}
		out[i] = h
	}
	return out
}

// Prepare starts the preparation of every adapter that can get ready
// without the engine ([Preparer]); each one's Run waits for its own.
func (s *Set) Prepare(ctx context.Context) {
	for _, m := range s.run {
		if p, ok := m.c.(Preparer); ok {
			p.Prepare(ctx)
		}
	}
}

// Run runs every adapter with e as its platform's engine ([As]), each
// [Leased] one only while this process holds its lease, until ctx ends.
// An adapter that fails (a revoked token) sends its error to errs, which
// must have room for one error per adapter; Run returns when every
// adapter's Run has.
func (s *Set) Run(ctx context.Context, e Engine, errs chan<- error) {
	var wg sync.WaitGroup
	for _, m := range s.run {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pe := As(m.c.Platform(), e, s.Options)
			var err error
			if l, ok := m.c.(Leased); ok && s.Leaser != nil && l.Lease() != "" {
				err = s.leased(ctx, m, l.Lease(), pe)
			} else {
				err = m.c.Run(ctx, pe)
			}
			if err != nil {
				errs <- err // adapters prefix their errors with their name
			}
		}()
	}
	wg.Wait()
}

// Close closes every adapter the set runs.
func (s *Set) Close() error {
	var errs []error
	for _, m := range s.run {
		if err := m.c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.c.Platform(), err))
		}
	}
	return errors.Join(errs...)
}

// CanThread reports whether the set can start threads on platform
// (a schedule's target).
func (s *Set) CanThread(platform string) bool {
	_, ok := s.named(platform).(Threader)
	return ok
}
