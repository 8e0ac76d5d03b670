package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
	"github.com/opsgate/opsgate/policy/policycli"
)

func (e *env) policy(_ context.Context, args []string) int {
	return policycli.Run(e.io(), args, e.policyCheck, e.policyExplain)
}

func (e *env) policyCheck(args []string) int {
	files, code, ok := e.parseArgs(flag.NewFlagSet("policy check", flag.ContinueOnError), args, policycli.Help, 1)
	if !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	file := cfg.Policy.File
	if len(files) == 1 {
		file = files[0]
	}
	return policycli.Check(e.io(), file, policyOptions(cfg))
}

func (e *env) policyExplain(args []string) int {
	fs := flag.NewFlagSet("policy explain", flag.ContinueOnError)
	var f policycli.ExplainFlags
	f.Register(fs)
	if code, ok := e.parse(fs, args, policycli.Help); !ok {
		return code
	}
	call, err := f.Check()
	if err != nil {
		return e.io().Usage(err, policycli.Help)
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	return f.Run(e.io(), cfg.Policy.File, policyOptions(cfg), call)
}

// configuredRoots are the roots: of each server in tools.servers.
func configuredRoots(cfg *config.Config) map[string][]string {
	m := map[string][]string{}
	for _, s := range cfg.Tools.Servers {
		m[s.Name] = s.Roots
	}
	return m
}

// policyOptions are the approvers the configuration names outside the
// policy file: each platform's approvers key, as identities.
func policyOptions(cfg *config.Config) policy.Options {
	platforms := map[string][]string{}
	for _, id := range cfg.Telegram.Approvers {
		platforms["telegram"] = append(platforms["telegram"], telegram.ActorID(id))
	}
	for _, id := range cfg.Slack.Approvers {
		platforms["slack"] = append(platforms["slack"], "slack:"+id)
	}
	for _, id := range cfg.Discord.Approvers {
		platforms["discord"] = append(platforms["discord"], "discord:"+id)
	}
	scheds := map[string][]string{}
	for _, s := range cfg.Schedules {
		if len(s.Approvers) > 0 {
			scheds[s.Name] = s.Approvers
		}
	}
	incidentApprovers(cfg, scheds)
	return policy.Options{PlatformApprovers: platforms, ScheduleApprovers: scheds, Roots: tools.NewRoots(configuredRoots(cfg)).Of}
}
