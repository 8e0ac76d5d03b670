// Package doctor is the body of opsgate doctor: it checks the
// configuration, reaches the LLM, starts every MCP server and lists its
// tools with their risk, opens the store and checks its audit log, the API
// tokens, the chat adapters, the schedules and the policy, and says how to
// fix each thing that is wrong. cmd/opsgate loads the configuration and
// hands over how to build what serve would build (docs/design.md §1), so
// that doctor checks the very thing serve runs.
package doctor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/schedule"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/cli"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
)

// Help is opsgate doctor's help.
const Help = `Usage: opsgate doctor

Check the configuration, reach the LLM, start every MCP server and list
its tools with their risk, open the store and check that its audit log is
still append-only and that its hash chain holds (as audit verify), and
check that opsgate serve has something to serve.
Prints what is wrong and how to fix it; exits 1 when anything is.
`

// Bounds of doctor's checks: an unreachable endpoint must not hang it.
const (
	llmTimeout   = 20 * time.Second
	toolsTimeout = 60 * time.Second // npx may download a server first
)

// Pinger is a model doctor can reach.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Doctor holds the configuration to check and how serve builds each part
// of it, so that doctor checks what serve would run.
type Doctor struct {
	Out    io.Writer
	Config *config.Config
	Log    *slog.Logger
	// UnknownEnv are warnings about OPSGATE_ variables nobody reads.
	UnknownEnv []string
	// PolicyOptions are the approvers the configuration names outside the
	// policy file.
	PolicyOptions policy.Options

	Model     func() (Pinger, error)
	Tools     func(opts ...tools.Option) (*tools.Host, error)
	OpenStore func(ctx context.Context) (core.Store, error)
	Chats     func() (*chats.Set, error)
	Schedules func(set *chats.Set) ([]schedule.Schedule, error)
	// NothingToServe says whether serve would refuse to start with
	// apiTokens tokens in use, what and how to fix it.
	NothingToServe func(apiTokens int) (what, fix string, empty bool)
}

// report prints doctor's findings and counts the problems.
type report struct {
	w        io.Writer
	problems int
}

func (r *report) ok(check, format string, args ...any) {
	fmt.Fprintf(r.w, "ok    %-7s %s\n", check, fmt.Sprintf(format, args...))
}

func (r *report) warn(check, format string, args ...any) {
	fmt.Fprintf(r.w, "warn  %-7s %s\n", check, fmt.Sprintf(format, args...))
}

func (r *report) fail(check, fix, format string, args ...any) {
	r.problems++
	fmt.Fprintf(r.w, "FAIL  %-7s %s\n", check, fmt.Sprintf(format, args...))
	if fix != "" {
		fmt.Fprintf(r.w, "              fix: %s\n", fix)
	}
}

func (r *report) detail(format string, args ...any) {
	fmt.Fprintf(r.w, "              %s\n", fmt.Sprintf(format, args...))
}

// Header is the first line doctor prints.
func Header(w io.Writer, version string) {
	fmt.Fprintf(w, "opsgate %s doctor\n", version)
}

// LogLevelFailed reports a bad --log-level (printed already) as a finding;
// nothing else is checked. It returns the exit code.
func LogLevelFailed(w io.Writer) int {
	r := &report{w: w}
	r.fail("config", "", "the log level is invalid (see above); nothing else was checked")
	return cli.ExitError
}

// ConfigFailed reports a configuration that does not load, with the same
// text as the other commands print; nothing else is checked.
func ConfigFailed(w io.Writer, err error) int {
	r := &report{w: w}
	r.fail("config", "correct that key (or the environment variable it names); nothing else was checked", "%v", err)
	fmt.Fprintf(r.w, "%d problem(s) found\n", r.problems)
	return cli.ExitError
}

// Run runs every check and returns the exit code: 1 when anything failed.
func (d *Doctor) Run(ctx context.Context) int {
	r := &report{w: d.Out}
	cfg := d.Config
	if cfg.File != "" {
		r.ok("config", "%s", cfg.File)
	} else {
		r.ok("config", "no file (%s absent); built-in defaults and the environment", config.DefaultFile)
	}
	for _, w := range d.UnknownEnv {
		r.warn("config", "%s", w)
	}
	d.checkLLM(ctx, r, cfg)
	d.checkTools(ctx, r, cfg)
	d.checkStore(ctx, r, cfg)
	tokens := d.checkTokens(ctx, r, cfg)
	d.checkRest(r, cfg, tokens)
	if r.problems > 0 {
		fmt.Fprintf(r.w, "%d problem(s) found\n", r.problems)
		return cli.ExitError
	}
	fmt.Fprintln(r.w, "all checks passed")
	return cli.ExitOK
}
