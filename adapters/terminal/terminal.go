// Package terminal is opsgate's local REPL: it reads the user's lines,
// hands them to the engine and renders the engine's events as plain text.
//
// On a terminal (Interactive) it shows a prompt, may use color and replace
// a tool's status line when the tool finishes, and treats Ctrl-C (see
// Interrupt) as "stop the run"; a second Ctrl-C quits. Otherwise it speaks
// a line protocol meant for scripts: each line is one message, one answer
// to an approval or one command, processed only after the previous one has
// finished (the run completed or paused for approval), output is plain
// text, and end of input waits for the last run. An approval still
// unanswered at end of input is denied by the system ("no answer means
// no", see core.Engine.DenyAsSystem) and Run reports ErrUnanswered; a run
// that ended with an error makes Run report ErrRunFailed, a line over
// MaxLineBytes ErrLineTooLong.
//
// Lines starting with a command word (/new, /status, /stop, /help, /quit)
// are commands in both modes and never reach the model; see commands.go.
// Everything printed that did not come from opsgate itself passes through
// Sanitize, so no escape sequence from a model, a tool or a user reaches
// the terminal.
package terminal

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Engine is what the adapter needs of core.Engine.
type Engine interface {
	// Handle starts, queues or steers a run with the message.
	Handle(ctx context.Context, in core.Inbound) error
	// Stop stops the conversation's active run and cancels its approvals.
	Stop(ctx context.Context, convKey string) bool
	// Decide answers an approval request.
	Decide(ctx context.Context, d core.Decision) (core.Approval, error)
	// DenyAsSystem denies an approval as opsgate itself (input ended).
	DenyAsSystem(ctx context.Context, approvalID, reason string) (core.Approval, error)
	// Status describes a conversation (/status).
	Status(ctx context.Context, convKey string) (core.Status, error)
	// Wait blocks until no run is active and all events were delivered.
	Wait(ctx context.Context) error
}

// Options configure an Adapter.
type Options struct {
	In  io.Reader
	Out io.Writer
	// Interactive: In and Out are a terminal (prompt, Ctrl-C, live lines).
	Interactive bool
	// Color enables opsgate's own ANSI escape sequences: colors, and
	// redrawing a tool's status line when it finishes. Only used when
	// Interactive; without it, no ESC byte is ever written.
	Color bool
	// User is the person at the keyboard: the requester and the approver.
	User core.Actor
	// ConvKey is the conversation to start in, made by ConvKey; /new
	// replaces its id with a fresh one.
	ConvKey string
	Logger  *slog.Logger
}

// Errors Run and Ask return (wrapped) so that a script sees a non-zero
// exit status. On a terminal, where the user saw what happened, only
// ErrUnanswered is returned.
var (
	// ErrUnanswered: input ended while approvals were pending; they were
	// denied.
	ErrUnanswered = errors.New("input ended with approvals unanswered")
	// ErrRunFailed: a run ended with an error (the model endpoint could not
	// be used, for example).
	ErrRunFailed = errors.New("a run failed")
	// ErrLineTooLong: lines over MaxLineBytes were discarded.
	ErrLineTooLong = errors.New("line too long")
)

// NoAnswerReason is the reason of the denial of an approval still waiting
// when input ends.
const NoAnswerReason = "no answer: input ended"

// doubleInterrupt is how soon a second Ctrl-C quits instead of stopping.
const doubleInterrupt = 2 * time.Second

// Adapter is the terminal adapter. Send may be called concurrently with Run.
type Adapter struct {
	opts Options
	log  *slog.Logger

	mu            sync.Mutex // guards everything below and writes to Out
	engine        Engine     // set by Run or Ask
	conv          string     // the conversation in use
	pending       []request  // awaiting an answer, in order
	batch         int        // requests in the current batch, for "1/2"
	busy          bool       // a run is active (from the user's point of view)
	midLine       bool       // Out does not end with a newline
	lastCall      string     // call id of the status line printed last
	asked         string     // approval id last asked about
	streamed      bool       // tokens of the current generation were printed
	streamedText  string     // and their text
	failed        bool       // the current run already reported its error
	answered      bool       // the current run printed an answer (else completed's text is printed)
	failures      int        // runs that ended with status error
	tooLong       int        // lines over MaxLineBytes
	lastInterrupt time.Time

	quitOnce sync.Once
	quit     chan struct{}
}

var _ core.EventSender = (*Adapter)(nil)

// New returns an adapter; it starts nothing.
func New(opts Options) *Adapter {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if !opts.Interactive {
		opts.Color = false
	}
	return &Adapter{
		opts: opts,
		log:  opts.Logger.With("adapter", "terminal"),
		conv: opts.ConvKey,
		quit: make(chan struct{}),
	}
}

// Run reads lines until end of input, /quit, a double Ctrl-C or the end of
// ctx, and hands them to e. At end of input it waits for the last run; see
// the package doc for approvals left unanswered.
func (a *Adapter) Run(ctx context.Context, e Engine) error {
	ctx, lines, done, err := a.start(ctx, e)
	if err != nil {
		return err
	}
	defer done()
	a.prompt()
	for {
		select {
		case <-ctx.Done():
			return a.ended(ctx)
		case l, ok := <-lines:
			if !ok || l.err != nil {
				return a.finish(ctx, l.err)
			}
			quit, err := a.handleLine(ctx, l)
			if err != nil || quit {
				return err
			}
			if !a.opts.Interactive {
				if err := a.engine.Wait(ctx); err != nil {
					return a.ended(ctx)
				}
				a.ask() // the next approval, once the last answer's effects are shown
			}
		}
	}
}

// Ask sends one message to e, waits for its run, and reads lines from In
// only to answer the run's approvals (opsgate chat -m).
func (a *Adapter) Ask(ctx context.Context, e Engine, text string) error {
	ctx, lines, done, err := a.start(ctx, e)
	if err != nil {
		return err
	}
	defer done()
	if err := a.send(ctx, text); err != nil {
		return err
	}
	for {
		if err := a.engine.Wait(ctx); err != nil {
			return a.ended(ctx)
		}
		if a.pendingCount() == 0 {
			return a.failure()
		}
		a.ask()
		select {
		case <-ctx.Done():
			return a.ended(ctx)
		case l, ok := <-lines:
			if !ok || l.err != nil {
				return a.finish(ctx, l.err)
			}
			if _, err := a.handleLine(ctx, l); err != nil {
				return err
			}
		}
	}
}

// Interrupt handles Ctrl-C: it stops the active run (or cancels pending
// approvals); when there is nothing to stop, or on a second Ctrl-C within
// two seconds, it makes Run and Ask return.
func (a *Adapter) Interrupt() {
	a.mu.Lock()
	now := time.Now()
	idle := !a.busy && len(a.pending) == 0
	again := !a.lastInterrupt.IsZero() && now.Sub(a.lastInterrupt) < doubleInterrupt
	a.lastInterrupt = now
	e := a.engine
	if idle || again || e == nil {
		a.mu.Unlock()
		a.quitOnce.Do(func() { close(a.quit) })
		return
	}
	a.printLocked(a.paint(dim, "^C stopping… (Ctrl-C again to quit)"))
	a.mu.Unlock()
	e.Stop(context.Background(), a.ConvKey())
}

// ConvKey returns the conversation in use: Options.ConvKey until /new.
func (a *Adapter) ConvKey() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conv
}

// input is one line of In: its text, or tooLong, or the read error that
// ended input.
type input struct {
	text    string
	tooLong bool
	err     error
}

// start takes the engine, derives a context that a double Ctrl-C
// cancels, and starts reading In.
func (a *Adapter) start(ctx context.Context, e Engine) (context.Context, <-chan input, func(), error) {
	if e == nil {
		return nil, nil, nil, errors.New("terminal: no engine")
	}
	a.mu.Lock()
	a.engine = e
	a.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-a.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, a.read(ctx), cancel, nil
}

// ended maps the end of ctx: a requested quit is not an error.
func (a *Adapter) ended(ctx context.Context) error {
	select {
	case <-a.quit:
		return nil
	default:
		return ctx.Err()
	}
}

func (a *Adapter) pendingCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}
