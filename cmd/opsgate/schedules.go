package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/schedule"
	"github.com/opsgate/opsgate/internal/config"
)

// buildSchedules parses the configured schedules; a target on a platform
// that is not enabled is an error naming the schedule.
func buildSchedules(cfg *config.Config, set *chats.Set) ([]schedule.Schedule, error) {
	var out []schedule.Schedule
	for i, s := range cfg.Schedules {
		spec, err := schedule.Parse(s.Cron)
		if err != nil {
			return nil, fmt.Errorf("config: schedules[%d].cron: %w", i, err)
		}
		if err := set.CheckTarget(s.Target); err != nil {
			return nil, fmt.Errorf("config: schedules[%d].target: %w (schedule %q)", i, err, s.Name)
		}
		out = append(out, schedule.Schedule{Name: s.Name, Spec: spec, Prompt: s.Prompt, Target: s.Target, CatchUp: s.CatchUp})
	}
	return out, nil
}

// scheduleTarget is where the app's fires run: in set's threads, with the
// toolsets each schedule loads.
func scheduleTarget(cfg *config.Config, a *app, set *chats.Set, log *slog.Logger) *chats.Target {
	toolsets := map[string][]string{}
	for _, s := range cfg.Schedules {
		toolsets[s.Name] = s.Toolsets
	}
	return &chats.Target{Engine: a.engine, Store: a.store, Chats: set, Toolsets: toolsets, Log: log}
}

// schedules is `opsgate schedules [run NAME]`.
func (e *env) schedules(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("schedules", flag.ContinueOnError)
	rest, code, ok := e.parseArgs(fs, args, schedule.Help, 2)
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
		fmt.Fprintf(e.stderr, "opsgate schedules: unexpected arguments %q\n\n%s", rest, schedule.Help)
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
		if err := schedule.WriteNext(e.stdout, s.Name, s.Cron, s.Target, now); err != nil {
			return e.fail(fmt.Errorf("config: schedules[%d].cron: %w", i, err))
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
		return e.fail(fmt.Errorf("schedules run: no schedule named %q", name))
	}
	chats, err := buildChats(cfg, e.log, nil)
	if err != nil {
		return e.fail(err)
	}
	scheds, err := buildSchedules(cfg, chats)
	if err != nil {
		return e.fail(err)
	}
	sender := &schedule.Answers{Out: e.stdout}
	a, err := openApp(ctx, cfg, e.log, sender)
	if err != nil {
		return e.fail(err)
	}
	serveChats(chats, a)
	defer e.closeApp(a, chats.Close)
	ledger, ok := a.store.(core.FireLedger)
	if !ok {
		return e.fail(errors.New("schedules run: the store keeps no fire ledger"))
	}
	// While this process runs the fire, its lease tells the replicas its
	// fire is alive; once it exits, the fire blocks nothing.
	a.holdReplicaLease(ctx, schedule.ReplicaName(), e.log)
	runCtx, cancel := context.WithCancel(ctx)
	engineDone := make(chan struct{})
	go func() { a.engine.Run(runCtx); close(engineDone) }()
	// The engine's loop ends (and logs its last) before the command
	// returns, also when the fire is refused.
	defer func() { cancel(); <-engineDone }()
	r := &schedule.Runner{
		Ledger: ledger, Replica: schedule.ReplicaName(), Log: e.log, Poll: 200 * time.Millisecond,
		Target: scheduleTarget(cfg, a, chats, e.log),
	}
	conv, err := schedule.FireAndWait(ctx, r, scheds[idx], a.engine, sender, 10*time.Second)
	if err != nil {
		return e.fail(fmt.Errorf("schedules run %s: %w", name, err))
	}
	fmt.Fprintf(e.stderr, "schedule %s ran in %s\n", name, conv)
	return exitOK
}
