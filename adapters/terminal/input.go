package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

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
	_, err := a.engine.Decide(ctx, d)
	a.decideFailed(r.Approval, err)
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

// decideFailed tells the user why a decision did not take.
func (a *Adapter) decideFailed(ap core.Approval, err error) {
	if err == nil {
		return
	}
	a.log.Warn("decide approval", "approval", ap.ID, "tool", ap.Tool, "err", err)
	a.println(a.paint(red, Sanitize(decideError(ap, err))))
}

func decideError(ap core.Approval, err error) string {
	switch {
	case errors.Is(err, core.ErrAlreadyDecided):
		return fmt.Sprintf("%s: the approval was already decided", ap.Tool)
	case errors.Is(err, core.ErrExpired):
		return fmt.Sprintf("%s: the approval expired (counts as denied)", ap.Tool)
	case errors.Is(err, core.ErrNotFound):
		return fmt.Sprintf("%s: the approval no longer exists", ap.Tool)
	case errors.Is(err, core.ErrNotAllowed):
		return fmt.Sprintf("%s: you may not decide this approval", ap.Tool)
	}
	return fmt.Sprintf("%s: decision failed: %v", ap.Tool, err)
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
			_, err := a.engine.DenyAsSystem(ctx, r.ID, NoAnswerReason)
			a.decideFailed(r.Approval, err)
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
