package metrics

import (
	"errors"

	"github.com/opsgate/opsgate/core"
)

// decidePlatforms are the platform label values of
// opsgate_approval_clicks_total: where a decision came from.
var decidePlatforms = []string{"telegram", "slack", "discord", "api"}

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

// Decided counts one decision attempt (a click, or a decision through the
// HTTP API as platform "api") by what Decide returned. A nil *Metrics
// counts nothing (doctor builds adapters without metrics).
func (m *Metrics) Decided(platform string, err error) {
	if m != nil {
		m.clicks.WithLabelValues(platform, DecideResult(err)).Inc()
	}
}
