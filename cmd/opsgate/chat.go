package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"os/user"
	"time"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
)

const chatHelp = `Usage: opsgate chat [-m TEXT]

Talk to opsgate in this terminal. Mutating tools ask for approval:
answer y or yes to approve, anything else denies. /stop stops the
current run; Ctrl-C stops it too, and a second Ctrl-C (or /quit) exits.

When stdin is not a terminal, each line is one message or one approval
answer, handled after the previous one has finished; output is plain
text; at end of input opsgate waits for the last run and exits 0. An
approval still unanswered at end of input is denied, and the exit code
is 1; so it is when a run ended with an error.

  -m TEXT  send TEXT, answer its approvals from stdin, and exit
`

// shutdownTimeout bounds waiting for runs and event delivery on exit.
const shutdownTimeout = 10 * time.Second

func (e *env) chat(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	message := fs.String("m", "", "send one message and exit")
	if code, ok := e.parse(fs, args, chatHelp); !ok {
		return code
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	interactive := isTerminal(e.stdin) && isTerminal(e.stdout)
	who := localUser(e.getenv)
	term := terminal.New(terminal.Options{
		In:          e.stdin,
		Out:         e.stdout,
		Interactive: interactive,
		Color:       interactive && e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb",
		User:        who,
		ConvKey:     "terminal:" + who.ID,
		Logger:      e.log,
	})
	a, err := openApp(ctx, cfg, e.log, term, nil)
	if err != nil {
		e.fail(err)
		return exitError
	}
	term.SetEngine(a.engine)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sweeper := make(chan struct{})
	go func() { a.engine.Run(runCtx); close(sweeper) }() // approval expiry
	// Ctrl-C: on a terminal it stops the run (twice: exits); in a script it
	// ends the session like SIGTERM.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-sigs:
				if interactive {
					term.Interrupt()
				} else {
					cancel()
				}
			case <-runCtx.Done():
				return
			}
		}
	}()
	if interactive {
		fmt.Fprintf(e.stdout, "opsgate %s · %s at %s · toolsets: %s\nType a message. y/yes approves a tool call, anything else denies. /stop or Ctrl-C stops a run; /quit or Ctrl-C twice exits.\n",
			version, cfg.LLM.Model, cfg.LLM.BaseURL, joinOr(serverNames(cfg), "none"))
	}

	if *message != "" {
		err = term.Ask(runCtx, *message)
	} else {
		err = term.Run(runCtx)
	}
	interrupted := runCtx.Err() != nil
	cancel()
	<-sweeper
	if interactive {
		fmt.Fprintln(e.stdout) // leave the shell prompt its own line
	}
	if interrupted {
		a.engine.Stop(context.Background(), "terminal:"+who.ID)
	}
	sctx, scancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer scancel()
	if serr := a.shutdown(sctx); serr != nil {
		e.log.Warn("shutdown", "err", serr)
	}
	switch {
	case interrupted && errors.Is(err, context.Canceled):
		return exitInterrupted
	case err != nil: // terminal.ErrUnanswered and ErrRunFailed included
		e.fail(err)
		return exitError
	}
	return exitOK
}

// localUser is the person at this terminal: the OS user.
func localUser(getenv func(string) string) core.Actor {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = getenv("USER")
	}
	if name == "" {
		name = "local"
	}
	return core.Actor{ID: name, Name: name}
}
