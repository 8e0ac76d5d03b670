package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// modelStep is the model node: window the transcript, offer the loaded
// tools, stream one completion, and route to the gate or to final.
func (e *Engine) modelStep(ctx context.Context, rs *runState) node {
	bg := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		rs.status = RunStopped
		return nodeFinal
	}
	if rs.run.Iterations >= e.cfg.MaxIterations {
		rs.status = RunMaxIterations
		rs.finalText = fmt.Sprintf("I stopped after %d model calls without reaching an answer (llm.max_iterations). "+
			"Nothing else will run. Tell me to continue, or narrow the request.", rs.run.Iterations)
		e.stage(rs, Message{Role: RoleAssistant, Content: rs.finalText})
		return nodeFinal
	}
	steer := e.takeSteer(rs.act)
	for _, in := range steer {
		// Name: a steering message's author need not be the run's
		// requester, and the timeline names who wrote it.
		e.stage(rs, Message{Role: RoleUser, Content: in.Text, Time: in.Time, Name: in.User.String()})
	}
	// What the model is about to see is stored before it is asked, with the
	// steering messages marked handled.
	if len(rs.staged.msgs) > 0 || len(rs.staged.audit) > 0 {
		if err := e.commit(bg, rs, Batch{InboundDone: steer}); err != nil {
			return e.fail(rs, err)
		}
	}
	// A run resumed after an approval is the same user turn: its memory
	// is retrieved again (it was never stored) for the calls that remain.
	e.memoryPrepare(ctx, rs)
	schemas, notes := e.catalogue(ctx, rs)
	if ctx.Err() != nil {
		rs.status = RunStopped
		return nodeFinal
	}
	req := ModelRequest{Messages: e.requestMessages(rs, notes), Tools: schemas}
	if e.maybeCompact(ctx, rs, req.Messages) {
		req.Messages = e.requestMessages(rs, notes)
	}
	if ctx.Err() != nil {
		rs.status = RunStopped
		return nodeFinal
	}
	resp, partial, err := e.generate(ctx, rs, req)
	if err != nil {
		if ctx.Err() != nil {
			rs.status = RunStopped
			if partial != "" {
				// Keep what the user already saw, so the next turn has it.
				e.stage(rs, Message{Role: RoleAssistant, Content: partial + "\n\n[stopped]"})
			}
			return nodeFinal
		}
		rs.status = RunError
		msg := modelErrorText(err, e.cfg.Retry.MaxRetries)
		rs.finalText = msg
		rs.run.Error = msg
		rs.out.emit(rs.run.ID, Event{Type: EventWorkflowError, Error: msg, Text: msg})
		return nodeFinal
	}
	rs.run.Iterations++
	msg := resp.Message
	msg.Role = RoleAssistant
	for i := range msg.ToolCalls {
		if msg.ToolCalls[i].ID == "" {
			msg.ToolCalls[i].ID = "call_" + newID()[:16]
		}
	}
	// Stored with the first result of its tool calls, or with the run's end.
	e.stage(rs, msg)
	if len(msg.ToolCalls) > 0 {
		rs.batch = e.resolve(rs, msg.ToolCalls)
		return nodeGate
	}
	rs.status = RunDone
	rs.finalText = msg.Content
	return nodeFinal
}

// fail ends the run on an infrastructure error (the store failed).
func (e *Engine) fail(rs *runState, err error) node {
	e.log.Error("run failed", "run", rs.run.ID, "err", err)
	msg := "opsgate failed internally: " + err.Error()
	rs.status = RunError
	rs.run.Error = msg
	rs.finalText = msg
	rs.out.emit(rs.run.ID, Event{Type: EventWorkflowError, Error: msg, Text: msg})
	return nodeFinal
}

// generate streams one model call, retrying rate limits and transient
// failures that happened before any output reached the user.
func (e *Engine) generate(ctx context.Context, rs *runState, req ModelRequest) (ModelResponse, string, error) {
	id := rs.run.ID
	for attempt := 0; ; attempt++ {
		rs.out.emit(id, Event{Type: EventGenerationStart, Attempt: attempt + 1})
		start := e.now()
		var partial strings.Builder
		first, thinking, emitted := true, false, false
		resp, err := e.model.Generate(ctx, req, func(d Delta) {
			if first {
				first = false
				ttft := e.now().Sub(start)
				if rs.run.TTFT == 0 {
					rs.run.TTFT = ttft
				}
				rs.out.emit(id, Event{Type: EventTTFT, Duration: ttft})
			}
			if d.Thinking != "" {
				thinking = true
				rs.out.emit(id, Event{Type: EventThinking, Text: d.Thinking})
			}
			if d.Text != "" {
				if thinking {
					thinking = false
					rs.out.emit(id, Event{Type: EventThinkingComplete})
				}
				emitted = true
				partial.WriteString(d.Text)
				rs.out.emit(id, Event{Type: EventToken, Text: d.Text})
			}
		})
		if thinking {
			rs.out.emit(id, Event{Type: EventThinkingComplete})
		}
		if err == nil {
			u := resp.Usage
			rs.run.Usage.Add(u)
			rs.out.emit(id, Event{Type: EventTokenUsage, Usage: &u})
			rs.out.emit(id, Event{Type: EventGenerationComplete, Text: resp.Message.Content, Duration: e.now().Sub(start)})
			return resp, partial.String(), nil
		}
		if ctx.Err() != nil {
			return resp, partial.String(), ctx.Err()
		}
		var me *ModelError
		if !errors.As(err, &me) || emitted || attempt >= e.cfg.Retry.MaxRetries ||
			(me.Kind != ModelRateLimited && me.Kind != ModelTransient) {
			return resp, partial.String(), err
		}
		delay := e.backoff(me, attempt)
		typ := EventTransientError
		if me.Kind == ModelRateLimited {
			typ = EventRateLimit
		}
		rs.out.emit(id, Event{Type: typ, Attempt: attempt + 1, RetryAfter: delay, Error: me.Message})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return resp, partial.String(), ctx.Err()
		case <-t.C:
		}
	}
}

// backoff doubles from Base per attempt, capped per kind; a server's
// Retry-After is honoured when it asks for longer (within the cap).
func (e *Engine) backoff(me *ModelError, attempt int) time.Duration {
	limit := e.cfg.Retry.TransientMax
	if me.Kind == ModelRateLimited {
		limit = e.cfg.Retry.RateLimitMax
	}
	d := e.cfg.Retry.Base << attempt
	if d > limit || d <= 0 {
		d = limit
	}
	if me.RetryAfter > d {
		d = min(me.RetryAfter, limit)
	}
	return d
}

func modelErrorText(err error, retries int) string {
	var me *ModelError
	if !errors.As(err, &me) {
		return "The model call failed: " + err.Error()
	}
	status := ""
	if me.StatusCode != 0 {
		status = fmt.Sprintf(" (HTTP %d)", me.StatusCode)
	}
	switch me.Kind {
	case ModelRateLimited:
		return fmt.Sprintf("The model endpoint is rate limiting us%s and still was after %d retries: %s. Try again in a minute.", status, retries, me.Message)
	case ModelTransient:
		return fmt.Sprintf("The model endpoint is unavailable%s after %d retries: %s. Check llm.base_url or try again shortly.", status, retries, me.Message)
	default:
		return fmt.Sprintf("The model request failed%s: %s", status, me.Message)
	}
}

// requestMessages builds what the model sees: the base system prompt, this
// turn's memory and notes as additional system messages, then the window.
func (e *Engine) requestMessages(rs *runState, notes []string) []Message {
	var out []Message
	if e.cfg.SystemPrompt != "" {
		out = append(out, Message{Role: RoleSystem, Content: e.cfg.SystemPrompt})
	}
	if rs.memoryMsg != "" {
		out = append(out, Message{Role: RoleSystem, Content: rs.memoryMsg})
	}
	if len(notes) > 0 {
		out = append(out, Message{Role: RoleSystem, Content: strings.Join(notes, "\n")})
	}
	hist, summary := history(rs.msgs)
	if summary != "" {
		out = append(out, Message{Role: RoleSystem, Content: summary})
	}
	return append(out, elideStale(Window(hist, e.cfg.ContextWindowMessages))...)
}
