package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
)

const chatHelp = `Usage: opsgate chat [--resume | --conversation NAME] [-m TEXT]

Talk to opsgate in this terminal. Each start is a new conversation,
unless --resume or --conversation says otherwise. Mutating tools ask for
approval: answer y or yes to approve, anything else denies. /stop stops
the current run; Ctrl-C stops it too, and a second Ctrl-C (or /quit)
exits. /new starts a fresh conversation, /status shows what runs and
waits, /help lists the commands.

When stdin is not a terminal, each line is one message, approval answer
or command, handled after the previous one has finished; output is plain
text; at end of input opsgate waits for the last run and exits 0. An
approval still unanswered at end of input is denied, and the exit code
is 1; so it is when a run ended with an error or a line was longer than
1 MiB (such a line is discarded, and the next one is read as usual).
Ctrl-C (SIGINT) then ends the session like SIGTERM: the current run is
stopped, its open approvals are cancelled, and the exit code is 130.

  --resume             continue your most recent terminal conversation
  --conversation NAME  continue the conversation NAME (letters, digits,
                       '-', '_', '.'), or start it
  -m TEXT              send TEXT, answer its approvals from stdin, and exit
`

// shutdownTimeout bounds waiting for runs and event delivery on exit.
const shutdownTimeout = 10 * time.Second

func (e *env) chat(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	message := fs.String("m", "", "send one message and exit")
	resume := fs.Bool("resume", false, "continue the most recent terminal conversation")
	named := fs.String("conversation", "", "continue or start the conversation NAME")
	if code, ok := e.parse(fs, args, chatHelp); !ok {
		return code
	}
	if *resume && *named != "" {
		fmt.Fprintf(e.stderr, "opsgate chat: --resume and --conversation cannot be used together\n\n%s", chatHelp)
		return exitUsage
	}
	if *named != "" {
		if err := terminal.CheckConvName(*named); err != nil {
			fmt.Fprintf(e.stderr, "opsgate chat: --conversation: %v\n", err)
			return exitUsage
		}
	}
	cfg, ok := e.setup(slog.LevelWarn)
	if !ok {
		return exitError
	}
	e.warnUnknownEnv()
	interactive := isTerminal(e.stdin) && isTerminal(e.stdout)
	who := terminal.LocalUser(e.getenv)
	a, err := openApp(ctx, cfg, e.log, nil)
	if err != nil {
		e.fail(err)
		return exitError
	}
	conv, err := terminal.ChooseConversation(ctx, a.engine.ConversationKeys, who.Name, *resume, *named)
	if err != nil {
		e.fail(err)
		sctx, scancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer scancel()
		_ = a.shutdown(sctx)
		return exitError
	}
	term := terminal.New(terminal.Options{
		In:          e.stdin,
		Out:         e.stdout,
		Interactive: interactive,
		Color:       interactive && e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb",
		User:        who,
		ConvKey:     conv.Key,
		Logger:      e.log,
	})
	// The terminal shows the events of its person's conversations (the
	// engine redacted them): the one in use, and one left by /new finishing.
	mine := terminal.ConvPrefix(who.Name)
	a.engine.Subscribe("", term, core.SubscribeOptions{
		Owns: func(key string) bool { return strings.HasPrefix(key, mine) },
	})

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
		fmt.Fprintf(e.stdout, "opsgate %s · %s at %s · toolsets: %s\n%s\nType a message. y/yes approves a tool call, anything else denies. /stop or Ctrl-C stops a run; /quit or Ctrl-C twice exits; /help lists the commands.\n",
			version, cfg.LLM.Model, cfg.LLM.BaseURL, joinOr(serverNames(cfg), "none"), conv.Banner())
	} else if conv.Note != "" {
		fmt.Fprintf(e.stderr, "opsgate: %s\n", conv.Note)
	}

	if *message != "" {
		err = term.Ask(runCtx, a.engine, *message)
	} else {
		err = term.Run(runCtx, a.engine)
	}
	interrupted := runCtx.Err() != nil
	cancel()
	<-sweeper
	if interactive {
		fmt.Fprintln(e.stdout) // leave the shell prompt its own line
	}
	if interrupted {
		// Nobody at the terminal stopped it: opsgate ends the conversation
		// itself, and the audit says so.
		a.engine.StopAs(context.Background(), term.ConvKey(), core.SystemActor, "opsgate was stopped while the request was pending")
	}
	sctx, scancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer scancel()
	if serr := a.shutdown(sctx); serr != nil {
		e.log.Warn("shutdown", "err", serr)
	}
	switch {
	case interrupted && errors.Is(err, context.Canceled):
		return exitInterrupted
	case err != nil: // terminal.ErrUnanswered, ErrRunFailed and ErrLineTooLong included
		e.fail(err)
		return exitError
	}
	return exitOK
}
