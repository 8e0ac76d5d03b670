package core

import "context"

// A run whose end could not be stored (the store was down past its
// retries) is still marked running there. It ended here, and people were
// told how (an error, when the outage made it fail): it must never look
// interrupted to this engine or run again silently. unrecorded keeps such
// runs until their end is stored; the sweep tries again.

// keepUnrecorded remembers run, whose end the store refused.
func (e *Engine) keepUnrecorded(run Run) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.unrecorded == nil {
		e.unrecorded = map[string]Run{}
	}
	e.unrecorded[run.ID] = run
}

// isUnrecorded reports whether run ended here with its end not stored yet.
func (e *Engine) isUnrecorded(runID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.unrecorded[runID]
	return ok
}

// recordEnds stores the ends the store refused before.
func (e *Engine) recordEnds(ctx context.Context) {
	e.mu.Lock()
	runs := make([]Run, 0, len(e.unrecorded))
	for _, r := range e.unrecorded {
		runs = append(runs, r)
	}
	e.mu.Unlock()
	for _, r := range runs {
		if err := e.store.Apply(ctx, Batch{ConvKey: r.ConvKey, UpdateRun: &r}); err != nil {
			e.log.Warn("record a run's end (tried again later)", "run", r.ID, "err", err)
			return
		}
		e.log.Info("recorded a run's end after a store outage", "run", r.ID, "status", r.Status)
		e.mu.Lock()
		delete(e.unrecorded, r.ID)
		e.mu.Unlock()
	}
}
