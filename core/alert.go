package core

import "time"

// Alert events are not steps of a run: an alert intake records them in the
// incident conversation it opened (Engine.Note), so that the conversation's
// timeline shows when the alert fired and resolved (docs/design.md §19).
const (
	// EventAlertFired: an alert of the conversation's group fired (or
	// joined the group). Event.Time is when opsgate received it;
	// Alert.StartsAt is when it began.
	EventAlertFired EventType = "alert.fired"
	// EventAlertResolved: an alert of the group resolved, at Alert.EndsAt.
	EventAlertResolved EventType = "alert.resolved"
)

// AlertInfo is one alert as an alert.fired or alert.resolved event carries
// it.
type AlertInfo struct {
	// Name is the alertname label; Severity the severity label.
	Name     string `json:"name"`
	Severity string `json:"severity,omitempty"`
	// Summary is the summary (else description) annotation.
	Summary      string            `json:"summary,omitempty"`
	Fingerprint  string            `json:"fingerprint,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"starts_at,omitzero"`
	EndsAt       time.Time         `json:"ends_at,omitzero"`
	GeneratorURL string            `json:"generator_url,omitempty"`
	// Receiver is the Alertmanager receiver that delivered it.
	Receiver string `json:"receiver,omitempty"`
}

// Note records ev in conversation convKey outside any run: numbered,
// kept in the event log and delivered to the conversation's subscribers
// like a run's events (its RunID is empty). Alert intakes use it for
// alert.fired and alert.resolved.
func (e *Engine) Note(convKey string, ev Event) {
	e.outbox(convKey).emit("", ev)
}
