package llm

import (
	"context"
	"errors"

	"github.com/opsgate/opsgate/core"
)

// Generate streams one chat completion; see core.Model. onDelta may be nil.
func (c *Client) Generate(ctx context.Context, req core.ModelRequest, onDelta func(core.Delta)) (core.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return core.ModelResponse{}, err
	}
	params, err := c.params(req)
	if err != nil {
		return core.ModelResponse{}, err
	}
	if onDelta == nil {
		onDelta = func(core.Delta) {}
	}

	// sctx carries the stream; the watchdog cancels it when the server goes
	// quiet, before the first chunk or between two.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	wd := watch(cancel, c.cfg.RequestTimeout, c.cfg.StreamIdleTimeout)
	defer wd.stop()

	stream := c.chat.NewStreaming(sctx, params)
	// Close also aborts the body read, so a stop ends the stream at once.
	defer stream.Close()
	var a answer
	for stream.Next() {
		wd.chunk()
		if err := a.add(stream.Current(), onDelta); err != nil {
			return core.ModelResponse{}, err
		}
	}
	err = stream.Err()
	if ctx.Err() != nil {
		return core.ModelResponse{}, ctx.Err()
	}
	if err != nil || a.finish == "" {
		if e := c.quietError(context.Cause(sctx), &a); e != nil {
			return core.ModelResponse{}, e
		}
	}
	if err != nil {
		return core.ModelResponse{}, c.classify(err, a.output)
	}
	return a.response()
}

// quietError is the error of an attempt the watchdog ended (cause is its
// cancel cause), nil when it did not end it.
func (c *Client) quietError(cause error, a *answer) *core.ModelError {
	switch {
	case errors.Is(cause, errNoAnswer):
		return &core.ModelError{Kind: core.ModelTransient, Message: c.noAnswerMessage(), Err: cause}
	case errors.Is(cause, errStreamIdle):
		e := &core.ModelError{Kind: core.ModelTransient, Message: c.silenceMessage(a.tokens, a.output), Err: cause}
		if a.output {
			// Part of an answer was streamed: retrying would show it twice.
			e.Kind = core.ModelFatal
		}
		return e
	}
	return nil
}
