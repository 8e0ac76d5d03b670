package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/opsgate/opsgate/internal/cli"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy/redact"
)

// Exit codes (internal/cli).
const (
	exitOK          = cli.ExitOK
	exitError       = cli.ExitError
	exitUsage       = cli.ExitUsage
	exitInterrupted = cli.ExitInterrupted
)

// env is what a command gets from Main: the process's streams and
// environment, passed in so that tests can run the program in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// environ lists the environment ("NAME=value"), to warn about OPSGATE_
	// variables nobody reads; nil in tests that run Main.
	environ func() []string

	configFile string
	logLevel   string
	log        *slog.Logger
	// logBase is the handler under the redaction of log.
	logBase slog.Handler
}

// Main runs opsgate with args (without the program name) and returns the
// exit code. It parses, runs the command, and closes what it opened; ctx
// ending (SIGTERM) stops the command gracefully.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return mainEnv(ctx, args, stdin, stdout, stderr, getenv, nil)
}

// mainEnv is Main with the list of the environment's variables (os.Environ
// in main), which serve, chat and doctor check for misspelt OPSGATE_ ones.
func mainEnv(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, environ func() []string) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, environ: environ}
	global := flag.NewFlagSet("opsgate", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	e.commonFlags(global)
	showVersion := global.Bool("version", false, "print the version")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, cli.Usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "opsgate: %v\n\n%s", err, cli.Usage)
		return exitUsage
	}
	if *showVersion {
		return e.version(ctx, nil)
	}
	args = global.Args()
	if len(args) == 0 {
		fmt.Fprint(stderr, cli.Usage)
		return exitUsage
	}
	cmd, args := args[0], args[1:]
	commands := map[string]func(context.Context, []string) int{
		"chat":        e.chat,
		"serve":       e.serve,
		"doctor":      e.doctor,
		"migrate":     e.migrate,
		"audit":       e.audit,
		"approvals":   e.approvals,
		"policy":      e.policy,
		"schedules":   e.schedules,
		"memory":      e.memory,
		"incident":    e.incident,
		"token":       e.token,
		"healthcheck": e.healthcheck,
		"version":     e.version,
	}
	if cmd == "help" || cmd == "-h" || cmd == "--help" {
		fmt.Fprint(stdout, cli.Usage)
		return exitOK
	}
	run, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(stderr, "opsgate: unknown command %q\n\n%s", cmd, cli.Usage)
		return exitUsage
	}
	return run(ctx, args)
}

func (e *env) commonFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.configFile, "config", e.configFile, "configuration file")
	fs.StringVar(&e.logLevel, "log-level", e.logLevel, "debug, info, warn or error")
}

// parse parses a command's flags (which include the common ones) and
// takes no argument. ok is false when the command must end with code.
func (e *env) parse(fs *flag.FlagSet, args []string, help string) (code int, ok bool) {
	e.commonFlags(fs)
	return e.io().Parse(fs, args, help)
}

// parseArgs is parse for a command that takes up to max arguments, with
// flags before or after them.
func (e *env) parseArgs(fs *flag.FlagSet, args []string, help string, max int) (rest []string, code int, ok bool) {
	e.commonFlags(fs)
	return e.io().ParseArgs(fs, args, help, max)
}

// setup creates the logger and loads the configuration; on failure it has
// printed why and returns false.
func (e *env) setup(defaultLevel slog.Level) (*config.Config, bool) {
	if !e.initLog(defaultLevel) {
		return nil, false
	}
	cfg, err := e.loadConfig()
	if err != nil {
		e.fail(err)
		return nil, false
	}
	// From here on, log lines hide what the configuration holds secret too.
	// A policy file that does not load is reported by the command that
	// needs it; the logs then do without its patterns.
	red, err := newRedactor(cfg)
	if err != nil {
		red, _ = redact.New(redact.Options{Secrets: cfg.Secrets()})
	}
	e.log = slog.New(redact.NewHandler(e.logBase, red))
	return cfg, true
}

// initLog creates the logger; on a bad level it has printed why and
// returns false.
func (e *env) initLog(defaultLevel slog.Level) bool {
	level := defaultLevel
	name := e.logLevel
	if name == "" {
		name = e.getenv(config.EnvLogLevel)
	}
	if name != "" {
		if err := level.UnmarshalText([]byte(name)); err != nil {
			fmt.Fprintf(e.stderr, "opsgate: log level %q: want debug, info, warn or error\n", name)
			return false
		}
	}
	e.logBase = slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})
	// The built-in detectors apply before the configuration is read.
	e.log = slog.New(redact.NewHandler(e.logBase, nil))
	return true
}

// loadConfig loads the configuration named by --config or the environment.
func (e *env) loadConfig() (*config.Config, error) {
	cfg, err := config.Load(e.configFile, e.getenv)
	if err != nil {
		return nil, err
	}
	if cfg.File != "" {
		e.log.Debug("configuration loaded", "file", cfg.File)
	} else {
		e.log.Debug("no configuration file; using defaults and the environment")
	}
	return cfg, nil
}

// unknownEnv returns a warning for each OPSGATE_ variable of the
// environment that opsgate does not read (config.UnknownEnv).
func (e *env) unknownEnv() []string {
	if e.environ == nil {
		return nil
	}
	return config.UnknownEnv(e.environ())
}

// warnUnknownEnv logs unknownEnv's warnings, at the start of serve and chat.
func (e *env) warnUnknownEnv() {
	for _, w := range e.unknownEnv() {
		e.log.Warn(w)
	}
}

// fail prints err for the person at the terminal and returns exitError.
func (e *env) fail(err error) int { return e.io().Fail(err) }

// io is the streams a subcommand's package writes to.
func (e *env) io() cli.IO { return cli.IO{Stdout: e.stdout, Stderr: e.stderr} }

func (e *env) version(_ context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("version", flag.ContinueOnError), args, "Usage: opsgate version\n"); !ok {
		return code
	}
	fmt.Fprintf(e.stdout, "opsgate %s\n", version)
	return exitOK
}

// joinOr lists names for messages: "a, b", or none when empty.
func joinOr(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return strings.Join(names, ", ")
}
