package metrics

import (
	"github.com/opsgate/opsgate/core"
)

// decidePlatforms are the platform label values of
// opsgate_approval_clicks_total: where a decision came from.
var decidePlatforms = []string{"telegram", "slack", "discord", "api"}

// decideResults are the result label values of opsgate_approval_clicks_total:
// "ok", and the label of every kind of core's one table of error kinds.
var decideResults = resultLabels()

func resultLabels() []string {
	labels := []string{"ok"}
	for _, k := range core.Kinds() {
		labels = append(labels, k.Info().Label)
	}
	return labels
}

// DecideResult names what the engine's Decide returned, as the result
// label of opsgate_approval_clicks_total: "ok", or the error's kind's
// label from core's table (an error of no kind is "error").
func DecideResult(err error) string {
	if err == nil {
		return "ok"
	}
	return core.KindOf(err).Info().Label
}

// Decided counts one decision attempt (a click, or a decision through the
// HTTP API as platform "api") by what Decide returned. A nil *Metrics
// counts nothing (doctor builds adapters without metrics).
func (m *Metrics) Decided(platform string, err error) {
	if m != nil {
		m.clicks.WithLabelValues(platform, DecideResult(err)).Inc()
	}
}
