package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy/redact"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // a bad configuration, a failed check, a failed run
	exitUsage = 2 // unknown command or flag
	// exitInterrupted is the shell's code for a program ended by SIGINT.
	exitInterrupted = 130
)

const usage = `opsgate: a ChatOps agent for on-call engineers

Usage:
  opsgate [flags] <command> [command flags]

Commands:
  chat            talk to opsgate in this terminal (--resume, --conversation
                  NAME, -m TEXT); when stdin is not a terminal, read one
                  message, approval answer or command per line
  serve           run the configured chat adapters and schedules, with
                  /healthz, /readyz, /metrics and the HTTP API (/api/v1)
                  on server.listen
  doctor          check the configuration, the LLM, the MCP servers and
                  the store, and say how to fix what is wrong
  migrate         apply pending database migrations
  audit           print the audit log (--since, --conversation, --json),
                  redacted; audit verify checks its hash chain
  approvals       show ID prints an approval request with its whole
                  preview diff
  policy          check [FILE] validates the policy file; explain shows
                  what it decides for one call (opsgate policy help)
  schedules       list the schedules and their next fires; schedules run
                  NAME fires one now and waits for its run
  memory          long-term memory: import DIR, search QUERY [--explain],
                  list, show PATH, promote ID, reject ID, export
  incident        report KEY [--format md|json] prints a conversation's
                  timeline; postmortem KEY drafts a postmortem from it
  token           API tokens: create --person NAME (printed once), list,
                  revoke ID
  healthcheck     exit 0 when the local serve's /healthz answers 200 (for
                  container health checks)
  version         print the version
  help            show this help

Flags (before or after the command):
  --config FILE      configuration file (default: $OPSGATE_CONFIG, else
                     ./opsgate.yaml if it exists, else built-in defaults)
  --log-level LEVEL  debug, info, warn or error (default: $OPSGATE_LOG_LEVEL,
                     else warn for chat and info for the other commands)
  --version          print the version (as opsgate version)
`

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
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "opsgate: %v\n\n%s", err, usage)
		return exitUsage
	}
	if *showVersion {
		return e.version(ctx, nil)
	}
	args = global.Args()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
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
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	run, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(stderr, "opsgate: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
	return run(ctx, args)
}

func (e *env) commonFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.configFile, "config", e.configFile, "configuration file")
	fs.StringVar(&e.logLevel, "log-level", e.logLevel, "debug, info, warn or error")
}

// parse parses a command's flags (which include the common ones). ok is
// false when the command must end with code.
func (e *env) parse(fs *flag.FlagSet, args []string, help string) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	e.commonFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, help)
			return exitOK, false
		}
		fmt.Fprintf(e.stderr, "opsgate %s: %v\n\n%s", fs.Name(), err, help)
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "opsgate %s: unexpected argument %q\n\n%s", fs.Name(), fs.Arg(0), help)
		return exitUsage, false
	}
	return 0, true
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

// fail prints err for the person at the terminal.
func (e *env) fail(err error) {
	fmt.Fprintf(e.stderr, "opsgate: %v\n", err)
}

func (e *env) version(_ context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("version", flag.ContinueOnError), args, "Usage: opsgate version\n"); !ok {
		return code
	}
	fmt.Fprintf(e.stdout, "opsgate %s\n", version)
	return exitOK
}

// isTerminal reports whether f is a character device (a TTY), without
// another dependency.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// joinOr lists names for messages: "a, b", or none when empty.
func joinOr(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return strings.Join(names, ", ")
}
