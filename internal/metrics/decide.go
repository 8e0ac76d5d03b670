package metrics

import (
	"errors"

	"github.com/opsgate/opsgate/core"
)

// decideResults are the result label values of opsgate_approval_clicks_total.
var decideResults = []string{"ok", "not_allowed", "already_decided", "expired", "not_found", "hash_mismatch", "error"}

// DecideResult names what the engine's Decide returned, as the result
// label of opsgate_approval_clicks_total.
func DecideResult(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, core.ErrNotAllowed):
		return "not_allowed"
	case errors.Is(err, core.ErrAlreadyDecided):
		return "already_decided"
	case errors.Is(err, core.ErrExpired):
		return "expired"
	case errors.Is(err, core.ErrNotFound):
		return "not_found"
	case errors.Is(err, core.ErrHashMismatch):
		return "hash_mismatch"
	default:
		return "error"
	}
}

// Decided counts one decision attempt (a click) by what Decide returned.
// A nil *Metrics counts nothing (doctor builds adapters without metrics).
func (m *Metrics) Decided(err error) {
	if m != nil {
		m.clicks.WithLabelValues(DecideResult(err)).Inc()
	}
}
