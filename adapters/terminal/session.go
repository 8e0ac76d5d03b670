package terminal

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// ChatHelp is opsgate chat's help.
const ChatHelp = `Usage: opsgate chat [--resume | --conversation NAME] [-m TEXT]

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

// Session is one opsgate chat: the terminal on an engine, in a
// conversation ChooseConversation chose, until the input ends, -m's run
// ends or ctx ends. cmd/opsgate opens the engine and hands it over
// (docs/design.md §1).
type Session struct {
	In          io.Reader
	Out, Err    io.Writer
	Interactive bool // stdin and stdout are a terminal
	Color       bool
	User        core.Actor
	Conv        Choice
	Engine      *core.Engine
	Logger      *slog.Logger
	// Greeting is printed first on a terminal, before the conversation's
	// banner.
	Greeting string
	// Message, when set, is sent alone (-m); else every line of In is.
	Message string
}

// Run runs the session. interrupted is true when ctx ended it (SIGTERM,
// or Ctrl-C when not interactive) rather than the person; err is what
// ended it otherwise (ErrUnanswered, ErrRunFailed, ErrLineTooLong).
func (s Session) Run(ctx context.Context) (interrupted bool, err error) {
	term := New(Options{
		In:          s.In,
		Out:         s.Out,
		Interactive: s.Interactive,
		Color:       s.Color,
		User:        s.User,
		ConvKey:     s.Conv.Key,
		Logger:      s.Logger,
	})
	// The terminal shows the events of its person's conversations (the
	// engine redacted them): the one in use, and one left by /new finishing.
	mine := ConvPrefix(s.User.Name)
	s.Engine.Subscribe("", term, core.SubscribeOptions{
		Owns: func(key string) bool { return strings.HasPrefix(key, mine) },
	})

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sweeper := make(chan struct{})
	go func() { s.Engine.Run(runCtx); close(sweeper) }() // approval expiry
	// Ctrl-C: on a terminal it stops the run (twice: exits); in a script it
	// ends the session like SIGTERM.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-sigs:
				if s.Interactive {
					term.Interrupt()
				} else {
					cancel()
				}
			case <-runCtx.Done():
				return
			}
		}
	}()
	if s.Interactive {
		fmt.Fprintf(s.Out, "%s\n%s\nType a message. y/yes approves a tool call, anything else denies. /stop or Ctrl-C stops a run; /quit or Ctrl-C twice exits; /help lists the commands.\n",
			s.Greeting, s.Conv.Banner())
	} else if s.Conv.Note != "" {
		fmt.Fprintf(s.Err, "opsgate: %s\n", s.Conv.Note)
	}

	if s.Message != "" {
		err = term.Ask(runCtx, s.Engine, s.Message)
	} else {
		err = term.Run(runCtx, s.Engine)
	}
	interrupted = runCtx.Err() != nil
	cancel()
	<-sweeper
	if s.Interactive {
		fmt.Fprintln(s.Out) // leave the shell prompt its own line
	}
	if interrupted {
		// Nobody at the terminal stopped it: opsgate ends the conversation
		// itself, and the audit says so.
		s.Engine.StopAs(context.Background(), term.ConvKey(), core.SystemActor, "opsgate was stopped while the request was pending")
	}
	return interrupted, err
}
