package incident

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Store keeps incident records (both stores implement it). Every method is
// safe for concurrent use, also by several processes on one database.
type Store interface {
	// LatestIncident returns the group's incident with the highest Seq.
	LatestIncident(ctx context.Context, groupKey string) (Record, bool, error)
	// Incident returns the incident with conversation key key.
	Incident(ctx context.Context, key string) (Record, bool, error)
	// IncidentByThread returns the incident shown in chat conversation thread.
	IncidentByThread(ctx context.Context, thread string) (Record, bool, error)
	// SaveIncident stores r and returns it with its new Version: a record
	// with Version 0 is inserted (ErrConflict when its key, or its group's
	// Seq, exists); any other replaces the stored one if that still has
	// r.Version (ErrConflict otherwise).
	SaveIncident(ctx context.Context, r Record) (Record, error)
}

// Place is what an incident needs of a chat platform (an optional
// ability of its adapter).
type Place interface {
	// PostRoot posts text at where (a channel or chat) and returns the
	// conversation key of what follows it (a thread; on Telegram, the
	// replies) and a reference to the message for EditRoot. title names
	// a Discord thread.
	PostRoot(ctx context.Context, where, text, title string) (thread, root string, err error)
	// EditRoot replaces the root message's text.
	EditRoot(ctx context.Context, root, text string) error
	// Say posts text in the thread.
	Say(ctx context.Context, thread, text string) error
}

// Runs starts runs (cmd/opsgate answers it with the engine).
type Runs interface {
	// Start loads toolsets into conversation convKey (none: leave them)
	// and handles in there, as a message from its User.
	Start(ctx context.Context, convKey string, toolsets []string, in core.Inbound) error
}

// Service applies notifications: it is the intake behind POST
// /hooks/alertmanager.
type Service struct {
	Store   Store
	Runs    Runs
	Targets []Target
	// Places returns the platform's Place, or nil when it is not enabled
	// or cannot show incidents.
	Places         func(platform string) Place
	RetriggerAfter time.Duration
	Log            *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	threads sync.Map // thread -> cached key ("" while unknown), see ConversationOf
	keys    sync.Map // incident key -> Record (Thread, To, Target never change once set)
}

// Actor is who an incident's triage runs are requested by.
func Actor(receiver string) core.Actor {
	return core.Actor{ID: "alertmanager:" + receiver, Name: "Alertmanager " + receiver}
}

// maxAttempts bounds the compare-and-set loop of Take: each conflict
// means another replica saved the group's incident meanwhile.
const maxAttempts = 8

// reposting is how long a record without a root may wait for the
// replica that opened it before another one posts the root itself.
const reposting = time.Minute

// Take applies one notification. A group no target matches is logged and
// acknowledged (nil). An error means the notification was not (fully)
// applied; Alertmanager sends it again.
func (s *Service) Take(ctx context.Context, n Notification) error {
	idx := Route(s.Targets, n)
	if idx < 0 {
		s.log().Info("incidents: alert group matches no incidents target; acknowledged",
			"group", n.GroupKey, "receiver", n.Receiver, "status", n.Status, "alerts", len(n.Alerts))
		return nil
	}
	for range maxAttempts {
		cur, ok, err := s.Store.LatestIncident(ctx, n.GroupKey)
		if err != nil {
			return fmt.Errorf("incidents: read group %s: %w", n.GroupKey, err)
		}
		var curp *Record
		if ok {
			curp = &cur
		}
		plan := Decide(curp, n, idx, s.Targets[idx].To, s.now(), s.retrigger())
		if plan.Ignore {
			return nil
		}
		saved, err := s.Store.SaveIncident(ctx, plan.Next)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return fmt.Errorf("incidents: save %s: %w", plan.Next.Key, err)
		}
		return s.apply(ctx, plan, saved)
	}
	return fmt.Errorf("incidents: group %s: changed %d times while being updated", n.GroupKey, maxAttempts)
}

// apply shows what plan did to the incident now saved as r.
func (s *Service) apply(ctx context.Context, plan Plan, r Record) error {
	place := s.place(r)
	if place == nil {
		return fmt.Errorf("incidents: %s: the platform is not enabled", r.To)
	}
	now := s.now()
	// An incident whose opener failed to post its root (or died) gets it
	// from the next notification, with the triage that never started.
	if plan.Open || r.Thread == "" && now.Sub(r.OpenedAt) > reposting {
		var err error
		if r, err = s.post(ctx, place, r); err != nil {
			return err
		}
		s.log().Info("incidents: opened", "incident", r.Key, "group", r.GroupKey, "to", r.To, "thread", r.Thread)
		return s.triage(ctx, r, TriageText(s.triageOf(r), r), true)
	}
	if r.Thread == "" {
		// The replica that opened it is posting its root, which shows
		// this notification's state or the next one's.
		return nil
	}
	var errs []error
	if plan.Triage {
		errs = append(errs, s.triage(ctx, r, RetriageText(s.triageOf(r), r, now), false))
	}
	for _, k := range plan.Joined {
		errs = append(errs, place.Say(ctx, r.Thread, JoinedText(k)))
	}
	for _, k := range plan.Ended {
		errs = append(errs, place.Say(ctx, r.Thread, EndedText(k)))
	}
	if plan.Refired {
		errs = append(errs, place.Say(ctx, r.Thread, RefiredText(r)))
	}
	if plan.Resolved {
		errs = append(errs, place.Say(ctx, r.Thread, ResolvedText(r, now)))
		s.log().Info("incidents: resolved", "incident", r.Key, "after", r.Duration(now))
	}
	errs = append(errs, place.EditRoot(ctx, r.Root, RootText(r, now)))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("incidents: %s: %w", r.Key, err)
	}
	return nil
}

// post posts r's root and records where; on a conflict it records that
// on the newer record.
func (s *Service) post(ctx context.Context, place Place, r Record) (Record, error) {
	thread, root, err := place.PostRoot(ctx, s.Targets[r.Target].Where(), RootText(r, s.now()), Title(r))
	if err != nil {
		return r, fmt.Errorf("incidents: %s: post the root in %s: %w", r.Key, r.To, err)
	}
	for range maxAttempts {
		r.Thread, r.Root = thread, root
		saved, err := s.Store.SaveIncident(ctx, r)
		if err == nil {
			s.remember(saved)
			return saved, nil
		}
		if !errors.Is(err, ErrConflict) {
			return r, fmt.Errorf("incidents: %s: record its thread: %w", r.Key, err)
		}
		if r, _, err = s.Store.Incident(ctx, r.Key); err != nil {
			return r, fmt.Errorf("incidents: %s: %w", r.Key, err)
		}
	}
	return r, fmt.Errorf("incidents: %s: could not record its thread", r.Key)
}

// triage starts a triage run in the incident conversation; the first
// one loads the target's toolsets.
func (s *Service) triage(ctx context.Context, r Record, text string, first bool) error {
	var toolsets []string
	if first && r.Target < len(s.Targets) {
		toolsets = s.Targets[r.Target].Toolsets
	}
	in := core.Inbound{
		ConvKey:   r.Key,
		MessageID: "alertmanager:" + strconv.Itoa(r.Notifications),
		User:      Actor(r.Receiver),
		Text:      text,
		Time:      s.now(),
	}
	if err := s.Runs.Start(ctx, r.Key, toolsets, in); err != nil {
		return fmt.Errorf("incidents: %s: start the triage: %w", r.Key, err)
	}
	return nil
}

// ConversationOf returns the incident conversation shown in chat
// conversation thread, or "" when it shows none. Answers are cached: a
// thread is an incident's from its creation on, so "none" is kept only
// briefly (the root's thread may be recorded a moment after it exists).
func (s *Service) ConversationOf(ctx context.Context, thread string) string {
	if v, ok := s.threads.Load(thread); ok {
		c := v.(cachedThread)
		if c.key != "" || s.now().Sub(c.at) < negativeTTL {
			return c.key
		}
	}
	r, ok, err := s.Store.IncidentByThread(ctx, thread)
	if err != nil {
		s.log().Warn("incidents: look up a thread", "thread", thread, "err", err)
		return ""
	}
	if !ok {
		s.cacheThread(thread, "")
		return ""
	}
	s.remember(r)
	return r.Key
}

// Incident returns incident key's record as last seen (where it is shown
// and its target never change), from the store the first time.
func (s *Service) Incident(ctx context.Context, key string) (Record, bool) {
	if v, ok := s.keys.Load(key); ok {
		return v.(Record), true
	}
	r, ok, err := s.Store.Incident(ctx, key)
	if err != nil {
		s.log().Warn("incidents: look up an incident", "incident", key, "err", err)
		return Record{}, false
	}
	if ok && r.Thread != "" {
		s.remember(r)
	}
	return r, ok
}

// Target returns the target incident key was opened for.
func (s *Service) Target(ctx context.Context, key string) (Target, bool) {
	r, ok := s.Incident(ctx, key)
	if !ok || r.Target < 0 || r.Target >= len(s.Targets) {
		return Target{}, false
	}
	return s.Targets[r.Target], true
}

const (
	negativeTTL = 10 * time.Second
	maxCached   = 50_000
)

type cachedThread struct {
	key string
	at  time.Time
}

func (s *Service) cacheThread(thread, key string) {
	s.threads.Store(thread, cachedThread{key: key, at: s.now()})
}

func (s *Service) remember(r Record) {
	if r.Thread == "" {
		return
	}
	s.cacheThread(r.Thread, r.Key)
	s.keys.Store(r.Key, r)
	// The caches only grow with incidents and looked-up threads; a
	// process that saw this many starts over.
	n := 0
	s.threads.Range(func(any, any) bool { n++; return n <= maxCached })
	if n > maxCached {
		s.threads.Clear()
		s.keys.Clear()
	}
}

func (s *Service) place(r Record) Place {
	if s.Places == nil {
		return nil
	}
	return s.Places(Target{To: r.To}.Platform())
}

func (s *Service) triageOf(r Record) string {
	if r.Target >= 0 && r.Target < len(s.Targets) && s.Targets[r.Target].Triage != "" {
		return s.Targets[r.Target].Triage
	}
	return "Triage this alert: check what it points at with read-only tools, say what you found and what you would do."
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) retrigger() time.Duration {
	if s.RetriggerAfter > 0 {
		return s.RetriggerAfter
	}
	return time.Hour
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
