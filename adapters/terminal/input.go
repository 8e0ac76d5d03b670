package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// read delivers In's lines; the channel is closed at end of input, after a
// last input carrying the read error if there was one.
func (a *Adapter) read(ctx context.Context) <-chan input {
	ch := make(chan input)
	go func() {
		defer close(ch)
		lr := newLineReader(a.opts.In, MaxLineBytes)
		for {
			text, tooLong, err := lr.next()
			in := input{text: text, tooLong: tooLong, err: err}
			if errors.Is(err, io.EOF) {
				return
			}
			select {
			case ch <- in:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// handleLine handles one line of input: a command, an approval answer or a
// message. quit reports that the user asked to leave.
func (a *Adapter) handleLine(ctx context.Context, in input) (quit bool, err error) {
	a.mu.Lock()
	a.midLine = false // the user's Enter ended the line
	if in.tooLong {
		a.tooLong++
	}
	a.mu.Unlock()
	if in.tooLong {
		a.println(a.paint(red, "error: the line is longer than "+maxLineText+"; it was discarded"))
		a.prompt()
		return false, nil
	}
	text := strings.TrimSpace(in.text)
	if name, args, ok := parseCommand(text); ok && !EngineCommand(name) {
		return a.command(ctx, name, args)
	}
	switch {
	case text == "":
		if a.pendingCount() > 0 {
			return false, a.answer(ctx, text) // Enter alone: the default, deny
		}
		a.prompt()
		return false, nil
	case a.pendingCount() > 0:
		return false, a.answer(ctx, text)
	default:
		return false, a.send(ctx, text)
	}
}

func (a *Adapter) send(ctx context.Context, text string) error {
	a.mu.Lock()
	a.busy = true
	a.mu.Unlock()
	in := core.Inbound{ConvKey: a.ConvKey(), User: a.opts.User, Text: text, Time: time.Now()}
	err := a.engine.Handle(ctx, in)
	if err != nil {
		a.log.Error("handle message", "conv", in.ConvKey, "err", err)
		a.mu.Lock()
		a.busy = false
		a.mu.Unlock()
		if a.opts.Interactive {
			a.println(a.paint(red, "error: "+Sanitize(err.Error())))
			a.prompt()
			return nil
		}
		return fmt.Errorf("terminal: %w", err)
	}
	return nil
}

// answer decides the oldest pending approval: y or yes approves, anything
// else denies; words other than n/no become the reason given to the model.
func (a *Adapter) answer(ctx context.Context, text string) error {
	r, last, ok := a.nextPending()
	if !ok {
		return nil
	}
	d := core.Decision{ApprovalID: r.ID, Actor: a.opts.User, ActionHash: r.ActionHash}
	switch strings.ToLower(text) {
	case "y", "yes":
		d.Approve = true
	case "", "n", "no":
	default:
		d.Reason = text
	}
	got, err := a.engine.Decide(ctx, d)
	a.decideSaid(r.Approval, got, d.Approve, err)
	if !last && a.opts.Interactive {
		a.ask()
	}
	return nil
}

// nextPending removes and returns the oldest pending approval; last reports
// that it was the last one, so the run resumes.
func (a *Adapter) nextPending() (r request, last, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pending) == 0 {
		return request{}, false, false
	}
	r = a.pending[0]
	a.pending = a.pending[1:]
	last = len(a.pending) == 0
	if last {
		a.busy = true // the run resumes
	}
	return r, last, true
}

// decideSaid tells the user what a decision did when the run's events will
// not: why it did not take, or how far a vote short of the quorum is. The
// results and their words are the chats' (render.DecisionReply,
// render.Refusal, from core's one table of error kinds). asked is the
// request as it was asked; got is what the engine returned.
func (a *Adapter) decideSaid(asked, got core.Approval, approve bool, err error) {
	if got.ID == "" {
		got = asked
	}
	if err == nil {
		if got.Status == core.ApprovalPending && !got.Verdict.Proposal {
			text, _ := render.DecisionReply(got, approve, nil)
			a.println(a.paint(dim, Sanitize(text)))
		}
		return
	}
	a.log.Warn("decide approval", "approval", asked.ID, "tool", asked.Tool, "kind", core.KindOf(err), "err", err)
	a.println(a.paint(red, Sanitize(decideError(got, err))))
}

// decideError is the terminal's line for a refused decision: the tool and
// render.Refusal's sentences; an internal failure also says what failed,
// to the person who runs opsgate.
func decideError(ap core.Approval, err error) string {
	text := ap.Tool + ": " + render.Refusal(ap, err)
	if core.KindOf(err) == core.KindInternal {
		text = strings.TrimSuffix(text, ".") + ": " + err.Error()
	}
	return text
}

// finish handles end of input: wait for the last run, then deny, as the
// system, whatever still waits for an answer (and wait for the model to
// take that in). Nobody answered, so no person's name may be on the denial.
func (a *Adapter) finish(ctx context.Context, readErr error) error {
	if err := a.engine.Wait(ctx); err != nil {
		return a.ended(ctx)
	}
	denied := 0
	for a.pendingCount() > 0 {
		for {
			r, _, ok := a.nextPending()
			if !ok {
				break
			}
			denied++
			a.println(fmt.Sprintf("no answer for %s: input ended, denying", Sanitize(r.Tool)))
			got, err := a.engine.DenyAsSystem(ctx, r.ID, NoAnswerReason)
			a.decideSaid(r.Approval, got, false, err)
		}
		if err := a.engine.Wait(ctx); err != nil {
			return a.ended(ctx)
		}
	}
	if readErr != nil {
		return fmt.Errorf("terminal: read input: %w", readErr)
	}
	if denied > 0 {
		return fmt.Errorf("terminal: %w (%d denied)", ErrUnanswered, denied)
	}
	if a.opts.Interactive {
		return nil
	}
	return a.failure()
}

// failure reports runs that ended with an error and discarded lines.
func (a *Adapter) failure() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	if a.failures > 0 {
		errs = append(errs, fmt.Errorf("terminal: %w: %d run(s) ended with an error", ErrRunFailed, a.failures))
	}
	if a.tooLong > 0 {
		errs = append(errs, fmt.Errorf("terminal: %w: %d line(s) longer than %s were discarded", ErrLineTooLong, a.tooLong, maxLineText))
	}
	return errors.Join(errs...)
}
