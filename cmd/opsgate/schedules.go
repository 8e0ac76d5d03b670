package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/schedule"
	"github.com/opsgate/opsgate/internal/config"
)

const schedulesHelp = `Usage: opsgate schedules [run NAME]

Without arguments, list the configured schedules with their next fires.

  run NAME  fire the schedule now, in this process, against the configured
            store and target (like chat -m), and exit 0 when its run
            completed (1 when it failed or could not start)
`

// buildSchedules parses the configured schedules; a target on a platform
// that is not enabled is an error naming the schedule.
func buildSchedules(cfg *config.Config, chats []chat) ([]schedule.Schedule, error) {
	var out []schedule.Schedule
	for i, s := range cfg.Schedules {
		spec, err := schedule.Parse(s.Cron)
		if err != nil {
			return nil, fmt.Errorf("config: schedules[%d].cron: %w", i, err)
		}
		if s.Target != "log" {
			platform, _, _ := strings.Cut(s.Target, ":")
			if c := chatNamed(chats, platform); c == nil || c.thread == nil {
				return nil, fmt.Errorf("config: schedules[%d].target: %s is not enabled (schedule %q)", i, platform, s.Name)
			}
		}
		out = append(out, schedule.Schedule{Name: s.Name, Spec: spec, Prompt: s.Prompt, Target: s.Target, CatchUp: s.CatchUp})
	}
	return out, nil
}

func chatNamed(chats []chat, name string) *chat {
	for i := range chats {
		if chats[i].name == name {
			return &chats[i]
		}
	}
	return nil
}

// scheduleTarget starts a fire's run: a root message in the target naming
// the schedule, then the prompt as a message from "schedule:<name>".
type scheduleTarget struct {
	engine   *core.Engine
	store    core.Store
	chats    []chat
	toolsets map[string][]string // schedule name -> toolsets to load
	log      *slog.Logger
}

// ScheduleActor is who a schedule's runs are requested by: approvals of
// its writes go to the schedule's approvers (the policy knows them by this
// identity), and cards name the schedule.
func scheduleActor(name string) core.Actor {
	return core.Actor{ID: "schedule:" + name, Name: "schedule " + name}
}

func (t *scheduleTarget) Start(ctx context.Context, s schedule.Schedule, at time.Time) (string, error) {
	conv, err := t.thread(ctx, s, fmt.Sprintf("⏰ Scheduled run of %s (%s): %s", s.Name, at.UTC().Format("2006-01-02 15:04:05 MST"), s.Prompt))
	if err != nil {
		return "", err
	}
	if ts := t.toolsets[s.Name]; len(ts) > 0 {
		c := core.Conversation{Key: conv}
		for _, name := range ts {
			c.Toolsets = append(c.Toolsets, core.Toolset{Name: name})
		}
		if err := t.store.Apply(ctx, core.Batch{Conversation: &c}); err != nil {
			return conv, fmt.Errorf("schedule %s: load its toolsets: %w", s.Name, err)
		}
	}
	in := core.Inbound{
		ConvKey: conv, MessageID: "fire:" + strconv.FormatInt(at.Unix(), 10),
		User: scheduleActor(s.Name), Text: s.Prompt, Time: at,
	}
	if err := t.engine.Handle(ctx, in); err != nil {
		return conv, fmt.Errorf("schedule %s: %w", s.Name, err)
	}
	return conv, nil
}

func (t *scheduleTarget) Skipped(ctx context.Context, s schedule.Schedule, at time.Time) {
	msg := fmt.Sprintf("⏭ Skipped the %s run of %s: the previous run is still going.", at.UTC().Format("15:04:05 MST"), s.Name)
	if _, err := t.thread(ctx, s, msg); err != nil {
		t.log.Error("schedule: say a fire was skipped", "schedule", s.Name, "err", err)
	}
}

func (t *scheduleTarget) Busy(ctx context.Context, conv string) bool {
	st, err := t.engine.Status(ctx, conv)
	if err != nil {
		return true // ask again; a store hiccup must not end the watch
	}
	return st.Busy || st.ActiveRun != nil || len(st.PendingApprovals) > 0 || st.Queued > 0
}

// thread posts text where s posts and returns the conversation under it.
func (t *scheduleTarget) thread(ctx context.Context, s schedule.Schedule, text string) (string, error) {
	if s.Target == "log" {
		t.log.Info(text, "schedule", s.Name)
		return "schedule:" + s.Name + ":" + strconv.FormatInt(time.Now().UnixNano(), 36), nil
	}
	platform, where, _ := strings.Cut(s.Target, ":")
	c := chatNamed(t.chats, platform)
	if c == nil || c.thread == nil {
		return "", fmt.Errorf("schedule %s: %s is not enabled", s.Name, platform)
	}
	return c.thread(ctx, where, text, s.Name)
}

// logChat is the target "log": a fire's run is written to the log (and,
// as every run, to the audit log) instead of a chat.
func logChat(log *slog.Logger) chat {
	log = log.With("adapter", "log")
	return chat{
		name:   "log",
		owns:   func(key string) bool { return strings.HasPrefix(key, "schedule:") },
		sender: core.SenderFunc(func(_ context.Context, ev core.Event) error { logEvent(log, ev); return nil }),
		run:    func(ctx context.Context) error { <-ctx.Done(); return nil },
		close:  func() error { return nil },
		health: func() (bool, string) { return true, "writes to the log" },
	}
}

func logEvent(log *slog.Logger, ev core.Event) {
	switch ev.Type {
	case core.EventGenerationComplete:
		log.Info("answer", "conv", ev.ConvKey, "run", ev.RunID, "text", ev.Text)
	case core.EventToolAwaitingApproval:
		if a := ev.Approval; a != nil {
			log.Warn("approval needed", "conv", ev.ConvKey, "tool", a.Tool, "approval", a.ID)
		}
	case core.EventToolResult, core.EventToolError:
		if c := ev.Call; c != nil {
			log.Info(string(ev.Type), "conv", ev.ConvKey, "tool", c.Name)
		}
	case core.EventWorkflowError:
		log.Error("run failed", "conv", ev.ConvKey, "run", ev.RunID, "err", ev.Text)
	}
}

// replicaName names this process in the fire ledger.
func replicaName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// schedules is `opsgate schedules [run NAME]`.
func (e *env) schedules(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("schedules", flag.ContinueOnError)
	rest, code, ok := e.parseArgs(fs, args, schedulesHelp, 2)
	if !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	switch {
	case len(rest) == 0:
		return e.listSchedules(cfg)
	case rest[0] == "run" && len(rest) == 2:
		return e.runSchedule(ctx, cfg, rest[1])
	default:
		fmt.Fprintf(e.stderr, "opsgate schedules: unexpected arguments %q\n\n%s", rest, schedulesHelp)
		return exitUsage
	}
}

func (e *env) listSchedules(cfg *config.Config) int {
	if len(cfg.Schedules) == 0 {
		fmt.Fprintln(e.stdout, "no schedules configured (schedules:)")
		return exitOK
	}
	now := time.Now()
	for i, s := range cfg.Schedules {
		spec, err := schedule.Parse(s.Cron)
		if err != nil {
			e.fail(fmt.Errorf("config: schedules[%d].cron: %w", i, err))
			return exitError
		}
		fmt.Fprintf(e.stdout, "%s  %q → %s\n", s.Name, s.Cron, s.Target)
		for _, t := range schedule.NextN(spec, now, 3) {
			fmt.Fprintf(e.stdout, "  next %s (in %s)\n", t.Format(time.RFC3339), t.Sub(now).Round(time.Second))
		}
	}
	return exitOK
}

// runSchedule fires one schedule now in this process: its adapters only
// post (nothing is polled), the run's events go to the target, and the
// command waits for the run to end.
func (e *env) runSchedule(ctx context.Context, cfg *config.Config, name string) int {
	idx := -1
	for i, s := range cfg.Schedules {
		if s.Name == name {
			idx = i
		}
	}
	if idx < 0 {
		e.fail(fmt.Errorf("schedules run: no schedule named %q", name))
		return exitError
	}
	ref := &engineRef{}
	chats, err := buildChats(cfg, e.log, ref)
	if err != nil {
		e.fail(err)
		return exitError
	}
	chats = append(chats, logChat(e.log))
	scheds, err := buildSchedules(cfg, chats)
	if err != nil {
		e.fail(err)
		return exitError
	}
	var failed atomic.Value // string: the run's error
	sender := core.SenderFunc(func(ctx context.Context, ev core.Event) error {
		if ev.Type == core.EventWorkflowError {
			failed.Store(ev.Text)
		}
		if ev.Type == core.EventGenerationComplete && cfg.Schedules[idx].Target != "log" {
			fmt.Fprintln(e.stdout, ev.Text)
		}
		return nil
	})
	a, err := openApp(ctx, cfg, e.log, sender)
	if err != nil {
		e.fail(err)
		return exitError
	}
	ref.e, ref.red, ref.store = a.engine, a.red, a.store
	subscribeChats(a.engine, chats)
	defer e.closeApp(a, func() error {
		var errs []error
		for _, c := range chats {
			errs = append(errs, c.close())
		}
		return errors.Join(errs...)
	})
	ledger, ok := a.store.(core.FireLedger)
	if !ok {
		e.fail(errors.New("schedules run: the store keeps no fire ledger"))
		return exitError
	}
	// While this process runs the fire, its lease tells the replicas its
	// fire is alive; once it exits, the fire blocks nothing.
	a.holdReplicaLease(ctx, replicaName(), e.log)
	runCtx, cancel := context.WithCancel(ctx)
	engineDone := make(chan struct{})
	go func() { a.engine.Run(runCtx); close(engineDone) }()
	// The engine's loop ends (and logs its last) before the command
	// returns, also when the fire is refused.
	defer func() { cancel(); <-engineDone }()
	r := &schedule.Runner{
		Ledger: ledger, Replica: replicaName(), Log: e.log, Poll: 200 * time.Millisecond,
		Target: &scheduleTarget{engine: a.engine, store: a.store, chats: chats, toolsets: scheduleToolsets(cfg), log: e.log},
	}
	conv, err := r.FireNow(ctx, scheds[idx])
	// The run's last events may still be on their way to the log target:
	// let them land before the verdict, so it is the last line (and no
	// two writers share stderr).
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	_ = a.engine.Wait(wctx)
	wcancel()
	if msg, _ := failed.Load().(string); err == nil && msg != "" {
		err = errors.New(msg)
	}
	if err != nil {
		e.fail(fmt.Errorf("schedules run %s: %w", name, err))
		return exitError
	}
	fmt.Fprintf(e.stderr, "schedule %s ran in %s\n", name, conv)
	return exitOK
}

func scheduleToolsets(cfg *config.Config) map[string][]string {
	m := map[string][]string{}
	for _, s := range cfg.Schedules {
		m[s.Name] = s.Toolsets
	}
	return m
}
