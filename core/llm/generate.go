package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

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

	// sctx carries the stream. The request timeout cancels it only until the
	// first chunk arrives, so a long answer is never cut.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var firstChunk *time.Timer
	if c.cfg.RequestTimeout > 0 {
		firstChunk = time.AfterFunc(c.cfg.RequestTimeout, func() { cancel(errNoResponse) })
		defer firstChunk.Stop()
	}

	stream := c.chat.NewStreaming(sctx, params)
	// Close also aborts the body read, so a stop ends the stream at once.
	defer stream.Close()
	var a answer
	for stream.Next() {
		if firstChunk != nil {
			firstChunk.Stop()
			firstChunk = nil
		}
		if err := a.add(stream.Current(), onDelta); err != nil {
			return core.ModelResponse{}, err
		}
	}
	err = stream.Err()
	if ctx.Err() != nil {
		return core.ModelResponse{}, ctx.Err()
	}
	if err != nil {
		if errors.Is(context.Cause(sctx), errNoResponse) {
			return core.ModelResponse{}, &core.ModelError{
				Kind:    core.ModelTransient,
				Message: fmt.Sprintf("the model server sent nothing within %v (llm request timeout)", c.cfg.RequestTimeout),
				Err:     errNoResponse,
			}
		}
		return core.ModelResponse{}, classify(err, a.output)
	}
	return a.response()
}
