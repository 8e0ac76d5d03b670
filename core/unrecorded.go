package core

import (
	"context"
	"slices"
)

// A run whose end could not be stored (the store was down past its
// retries) is still marked running there. It ended here, and people were
// told how (an error, when the outage made it fail): it must never look
// interrupted to this engine or run again silently. unrecorded keeps such
// runs' last writes until the store takes them; the sweep tries again.

// keepUnrecorded remembers the last writes of rs, which the store refused.
func (e *Engine) keepUnrecorded(rs *runState) {
	run := rs.run
	b := Batch{ConvKey: run.ConvKey, UpdateRun: &run,
		Messages: slices.Clone(rs.staged.msgs), Audit: slices.Clone(rs.staged.audit)}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.unrecorded == nil {
		e.unrecorded = map[string]Batch{}
	}
	e.unrecorded[run.ID] = b
}

// recordEnds stores the ends the store refused before.
func (e *Engine) recordEnds(ctx context.Context) {
	e.mu.Lock()
	ends := make([]Batch, 0, len(e.unrecorded))
	for _, b := range e.unrecorded {
		ends = append(ends, b)
	}
	e.mu.Unlock()
	for _, b := range ends {
		if err := e.store.Apply(ctx, b); err != nil {
			e.log.Warn("record a run's end (tried again later)", "run", b.UpdateRun.ID, "err", err)
			return
		}
		e.log.Info("recorded a run's end after a store outage", "run", b.UpdateRun.ID, "status", b.UpdateRun.Status)
		e.mu.Lock()
		delete(e.unrecorded, b.UpdateRun.ID)
		e.mu.Unlock()
	}
}
