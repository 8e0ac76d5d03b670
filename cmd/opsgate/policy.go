package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
	"github.com/opsgate/opsgate/policy/policycli"
)

func (e *env) policy(_ context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, policycli.Help)
		return exitUsage
	}
	switch args[0] {
	case "check":
		return e.policyCheck(args[1:])
	case "explain":
		return e.policyExplain(args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, policycli.Help)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "opsgate policy: unknown command %q\n\n%s", args[0], policycli.Help)
	return exitUsage
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
	var call core.PolicyCall
	if f.CanSee == "" {
		var err error
		if call, err = f.Call(); err != nil {
			fmt.Fprintf(e.stderr, "opsgate policy explain: %v\n\n%s", err, policycli.Help)
			return exitUsage
		}
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	file := cmp.Or(f.Policy, cfg.Policy.File)
	if f.CanSee != "" {
		return policycli.CanSee(e.io(), file, policyOptions(cfg), f.CanSee)
	}
	return policycli.Explain(e.io(), file, policyOptions(cfg), call)
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
