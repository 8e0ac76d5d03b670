package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/schedule"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/doctor"
)

// doctor runs internal/doctor's checks over what serve would build from
// the configuration: the same model, tool host, store, chats and
// schedules.
func (e *env) doctor(ctx context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("doctor", flag.ContinueOnError), args, doctor.Help); !ok {
		return code
	}
	doctor.Header(e.stdout, version)
	if !e.initLog(slog.LevelWarn) {
		return doctor.LogLevelFailed(e.stdout)
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return doctor.ConfigFailed(e.stdout, err)
	}
	d := &doctor.Doctor{
		Out: e.stdout, Config: cfg, Log: e.log,
		UnknownEnv: e.unknownEnv(), PolicyOptions: policyOptions(cfg),
		Model: func() (doctor.Pinger, error) {
			m, err := newModel(cfg)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
		Tools:          func(opts ...tools.Option) (*tools.Host, error) { return newTools(cfg, e.log, opts...) },
		OpenStore:      func(ctx context.Context) (core.Store, error) { return openStore(ctx, cfg) },
		Chats:          func() (*chats.Set, error) { return buildChats(cfg, e.log, nil) },
		Schedules:      func(set *chats.Set) ([]schedule.Schedule, error) { return buildSchedules(cfg, set) },
		NothingToServe: func(apiTokens int) (string, string, bool) { return nothingToServe(cfg, apiTokens) },
	}
	return d.Run(ctx)
}
