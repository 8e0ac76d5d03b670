package chats

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/schedule"
)

// TargetEngine is what a schedule's fire asks of the engine
// (*core.Engine).
type TargetEngine interface {
	Handle(ctx context.Context, in core.Inbound) error
	Status(ctx context.Context, convKey string) (core.Status, error)
}

// Applier writes a fire's conversation with its toolsets (core.Store).
type Applier interface {
	Apply(ctx context.Context, b core.Batch) error
}

// Target starts schedules' fires in the threads of a Set
// (docs/design.md §13): a root message in the target naming the schedule,
// then the prompt as a message from "schedule:<name>" ([ScheduleActor]).
// The target "log" writes to Log instead of a chat. It is a
// schedule.Target.
type Target struct {
	Engine TargetEngine
	Store  Applier
	Chats  *Set
	// Toolsets are the toolsets each schedule's conversation loads, by
	// schedule name.
	Toolsets map[string][]string
	Log      *slog.Logger
}

var _ schedule.Target = (*Target)(nil)

// ScheduleActor is who a schedule's runs are requested by: approvals of
// its writes go to the schedule's approvers (the policy knows them by this
// identity), and cards name the schedule.
func ScheduleActor(name string) core.Actor {
	return core.Actor{ID: "schedule:" + name, Name: "schedule " + name}
}

// CheckTarget reports a schedule target ("log", "platform:where") that
// names a platform of no routed chat that can start threads.
func (s *Set) CheckTarget(target string) error {
	if target == "log" {
		return nil
	}
	platform, _, _ := strings.Cut(target, ":")
	if !s.CanThread(platform) {
		return fmt.Errorf("%s is not enabled", platform)
	}
	return nil
}

// Start posts the fire's root message and starts its run.
func (t *Target) Start(ctx context.Context, s schedule.Schedule, at time.Time) (string, error) {
	conv, err := t.thread(ctx, s, fmt.Sprintf("⏰ Scheduled run of %s (%s): %s", s.Name, at.UTC().Format("2006-01-02 15:04:05 MST"), s.Prompt))
	if err != nil {
		return "", err
	}
	if ts := t.Toolsets[s.Name]; len(ts) > 0 {
		c := core.Conversation{Key: conv}
		for _, name := range ts {
			c.Toolsets = append(c.Toolsets, core.Toolset{Name: name})
		}
		if err := t.Store.Apply(ctx, core.Batch{Conversation: &c}); err != nil {
			return conv, fmt.Errorf("schedule %s: load its toolsets: %w", s.Name, err)
		}
	}
	in := core.Inbound{
		ConvKey: conv, MessageID: "fire:" + strconv.FormatInt(at.Unix(), 10),
		User: ScheduleActor(s.Name), Text: s.Prompt, Time: at,
	}
	if err := t.Engine.Handle(ctx, in); err != nil {
		return conv, fmt.Errorf("schedule %s: %w", s.Name, err)
	}
	return conv, nil
}

// Skipped says in the target that a fire did not run.
func (t *Target) Skipped(ctx context.Context, s schedule.Schedule, at time.Time) {
	msg := fmt.Sprintf("⏭ Skipped the %s run of %s: the previous run is still going.", at.UTC().Format("15:04:05 MST"), s.Name)
	if _, err := t.thread(ctx, s, msg); err != nil {
		t.Log.Error("schedule: say a fire was skipped", "schedule", s.Name, "err", err)
	}
}

// Busy reports whether the fire's conversation still runs or waits.
func (t *Target) Busy(ctx context.Context, conv string) bool {
	st, err := t.Engine.Status(ctx, conv)
	if err != nil {
		return true // ask again; a store hiccup must not end the watch
	}
	return st.Busy || st.ActiveRun != nil || len(st.PendingApprovals) > 0 || st.Queued > 0
}

// thread posts text where s posts and returns the conversation under it.
func (t *Target) thread(ctx context.Context, s schedule.Schedule, text string) (string, error) {
	if s.Target == "log" {
		t.Log.Info(text, "schedule", s.Name)
		return "schedule:" + s.Name + ":" + strconv.FormatInt(time.Now().UnixNano(), 36), nil
	}
	platform, where, _ := strings.Cut(s.Target, ":")
	th, ok := t.Chats.named(platform).(Threader)
	if !ok {
		return "", fmt.Errorf("schedule %s: %s is not enabled", s.Name, platform)
	}
	return th.StartThread(ctx, where, text, s.Name)
}
