package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
)

const policyHelp = `Usage:
  opsgate policy check [FILE]
  opsgate policy explain --as IDENTITY --server NAME --tool NAME [--args JSON]
                         [--risk read|write|destructive] [--policy FILE]
  opsgate policy explain --can-see KEY [--policy FILE]

check validates a policy file (default: policy.file of the configuration):
it prints "ok: N people, N roles, N rules", or the first problem as
FILE:LINE: key: what is wrong, and exits 1.

explain prints what the policy decides for one call, like kubectl auth
can-i: the rule that matches, the action, who may approve and how many
must. IDENTITY is platform:id (slack:U0BOB, telegram:12345678,
terminal:alice). explain works offline: it does not ask the MCP servers
for the tool's risk, so give --risk as the tool's annotations would
(default: write, as for a tool without annotations).

explain --can-see KEY lists who may see conversation KEY (through the API
and its console) and why: the admins, the policy's visibility rules, a
terminal conversation's own person. Anyone who took part in it (sent a
message, voted, was eligible to decide one of its approvals, started it
through the API) sees it too, except a terminal conversation.
`

func (e *env) policy(_ context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, policyHelp)
		return exitUsage
	}
	switch args[0] {
	case "check":
		return e.policyCheck(args[1:])
	case "explain":
		return e.policyExplain(args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, policyHelp)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "opsgate policy: unknown command %q\n\n%s", args[0], policyHelp)
	return exitUsage
}

func (e *env) policyCheck(args []string) int {
	fs := flag.NewFlagSet("policy check", flag.ContinueOnError)
	files, code, ok := e.parseArgs(fs, args, policyHelp, 1)
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
	if file == "" {
		fmt.Fprintln(e.stdout, "ok: no policy file (policy.file is not set): the requester or the platform's approvers decide")
		return exitOK
	}
	p, err := policy.Load(file, policyOptions(cfg))
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitError
	}
	people, roles, rules := p.Counts()
	fmt.Fprintf(e.stdout, "ok: %d people, %d roles, %d rules\n", people, roles, rules)
	// Warnings leave the exit code alone: the file is valid as written.
	for _, w := range p.Warnings() {
		fmt.Fprintln(e.stdout, w)
	}
	return exitOK
}

func (e *env) policyExplain(args []string) int {
	fs := flag.NewFlagSet("policy explain", flag.ContinueOnError)
	as := fs.String("as", "", "who asks: platform:id")
	server := fs.String("server", "", "the MCP server (toolset)")
	tool := fs.String("tool", "", "the tool's name on its server")
	argsJSON := fs.String("args", "{}", "the call's arguments as JSON")
	risk := fs.String("risk", string(core.RiskWrite), "read, write or destructive")
	file := fs.String("policy", "", "policy file (default: policy.file)")
	canSee := fs.String("can-see", "", "list who may see this conversation key instead")
	if code, ok := e.parse(fs, args, policyHelp); !ok {
		return code
	}
	if *canSee != "" {
		return e.policyCanSee(*canSee, *file)
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "opsgate policy explain: %s\n\n%s", fmt.Sprintf(format, a...), policyHelp)
		return exitUsage
	}
	platform, id, _ := strings.Cut(*as, ":")
	switch {
	case platform == "" || id == "":
		return usage("--as: want an identity platform:id, such as slack:U0BOB (got %q)", *as)
	case *server == "" || *tool == "":
		return usage("--server and --tool are required")
	}
	switch core.Risk(*risk) {
	case core.RiskRead, core.RiskWrite, core.RiskDestructive:
	default:
		return usage("--risk: want read, write or destructive (got %q)", *risk)
	}
	canon, err := core.CanonicalJSON([]byte(*argsJSON))
	if err != nil {
		return usage("--args: %v", err)
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	if *file == "" {
		*file = cfg.Policy.File
	}
	p, err := policy.Load(*file, policyOptions(cfg))
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitError
	}
	c := core.PolicyCall{Server: *server, Tool: *tool, Arguments: canon, Risk: core.Risk(*risk),
		Requester: core.Actor{ID: *as}, ConvKey: platform + ":explain"}
	p.Explain(e.stdout, c)
	return exitOK
}

// policyCanSee prints who may see conversation key by the policy file.
func (e *env) policyCanSee(key, file string) int {
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	if file == "" {
		file = cfg.Policy.File
	}
	p, err := policy.Load(file, policyOptions(cfg))
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitError
	}
	p.ExplainCanSee(e.stdout, key)
	return exitOK
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

// parseArgs is parse for a command that takes up to max arguments, with
// flags before or after them.
func (e *env) parseArgs(fs *flag.FlagSet, args []string, help string, max int) (rest []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	e.commonFlags(fs)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(e.stdout, help)
				return nil, exitOK, false
			}
			fmt.Fprintf(e.stderr, "opsgate %s: %v\n\n%s", fs.Name(), err, help)
			return nil, exitUsage, false
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(rest) > max {
		fmt.Fprintf(e.stderr, "opsgate %s: unexpected argument %q\n\n%s", fs.Name(), rest[max], help)
		return nil, exitUsage, false
	}
	return rest, 0, true
}
