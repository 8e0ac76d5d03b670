package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
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
		sc := bufio.NewScanner(a.opts.In)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case ch <- input{text: sc.Text()}:
			case <-ctx.Done():
				return
			}
		}
		if err := sc.Err(); err != nil {
			select {
			case ch <- input{err: err}:
			case <-ctx.Done():
			}
		}
	}()
	return ch
}

// handleLine handles one line of input: /stop, /quit, an approval answer or a
// message. quit reports that the user asked to leave.
func (a *Adapter) handleLine(ctx context.Context, raw string) (quit bool, err error) {
	a.mu.Lock()
	a.midLine = false // the user's Enter ended the line
	a.mu.Unlock()
	text := strings.TrimSpace(raw)
	switch {
	case text == "":
		if a.pendingCount() > 0 {
			return false, a.answer(ctx, text) // Enter alone: the default, deny
		}
		a.prompt()
		return false, nil
	case core.IsStopCommand(text):
		if !a.engine.Stop(ctx, a.opts.ConvKey) {
			a.println(a.paint(dim, "nothing to stop"))
		}
		a.prompt()
		return false, nil
	case text == "/quit" || text == "/exit":
		if a.engine.Stop(ctx, a.opts.ConvKey) {
			_ = a.engine.Wait(ctx)
		}
		return true, nil
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
	err := a.engine.Handle(ctx, core.Inbound{
		ConvKey: a.opts.ConvKey,
		User:    a.opts.User,
		Text:    text,
		Time:    time.Now(),
	})
	if err != nil {
		a.log.Error("handle message", "conv", a.opts.ConvKey, "err", err)
		a.mu.Lock()
		a.busy = false
		a.mu.Unlock()
		if a.opts.Interactive {
			a.println(a.paint(red, "error: "+err.Error()))
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
	a.mu.Lock()
	if len(a.pending) == 0 {
		a.mu.Unlock()
		return nil
	}
	ap := a.pending[0]
	a.pending = a.pending[1:]
	last := len(a.pending) == 0
	if last {
		a.busy = true // the run resumes
	}
	a.mu.Unlock()
	d := core.Decision{ApprovalID: ap.ID, Actor: a.opts.User, ActionHash: ap.ActionHash}
	switch strings.ToLower(text) {
	case "y", "yes":
		d.Approve = true
	case "", "n", "no":
	default:
		d.Reason = text
	}
	if _, err := a.engine.Decide(ctx, d); err != nil {
		a.log.Warn("decide approval", "approval", ap.ID, "tool", ap.Tool, "err", err)
		a.println(a.paint(red, decideError(ap, err)))
	}
	if !last && a.opts.Interactive {
		a.ask()
	}
	return nil
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

// finish handles end of input: wait for the last run, then deny whatever
// still waits for an answer (and wait for the model to take that in).
func (a *Adapter) finish(ctx context.Context, readErr error) error {
	if err := a.engine.Wait(ctx); err != nil {
		return a.ended(ctx)
	}
	denied := 0
	for a.pendingCount() > 0 {
		for a.pendingCount() > 0 {
			denied++
			a.mu.Lock()
			ap := a.pending[0]
			a.mu.Unlock()
			a.println(fmt.Sprintf("no answer for %s: input ended, denying", ap.Tool))
			if err := a.answer(ctx, "no answer: input ended"); err != nil {
				return err
			}
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

// failure reports runs that ended with an error.
func (a *Adapter) failure() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failures > 0 {
		return fmt.Errorf("terminal: %w: %d run(s) ended with an error", ErrRunFailed, a.failures)
	}
	return nil
}
