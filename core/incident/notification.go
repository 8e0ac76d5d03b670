// Package incident turns Prometheus Alertmanager's notifications into
// incident conversations (docs/design.md §19): one per alert group, shown as
// a thread (or, on Telegram, a message and its replies) under a root message
// that names the alert; the first notification starts a triage run, later
// ones update the root, post alerts that join the group and the resolve,
// and open a new incident only after the target's retrigger interval.
//
// The package holds the domain rules (parsing, routing, what a notification
// changes, the texts) and the Service that applies them; it talks to the
// store, the chats and the engine through the small interfaces it owns, so
// that the rules are tested without any of them. It imports only the
// standard library and core.
package incident

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Notification is Alertmanager's webhook payload, version 4.
type Notification struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"` // firing | resolved
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []Alert           `json:"alerts"`
}

// Alert is one alert of a notification.
type Alert struct {
	Status       string            `json:"status"` // firing | resolved
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// Statuses of a notification and of an alert.
const (
	Firing   = "firing"
	Resolved = "resolved"
)

// ErrInvalid wraps every reason Parse refuses a payload.
var ErrInvalid = errors.New("invalid Alertmanager notification")

// Parse reads a webhook body: JSON, version "4", a group key, a known
// status and at least one alert with labels. Unknown fields are allowed
// (Alertmanager may add some); anything else wrong is ErrInvalid with the
// reason.
func Parse(body []byte) (Notification, error) {
	var n Notification
	if err := json.Unmarshal(body, &n); err != nil {
		return Notification{}, fmt.Errorf("%w: not JSON: %v", ErrInvalid, err)
	}
	switch {
	case n.Version != "4":
		return Notification{}, fmt.Errorf("%w: version %q, want \"4\" (Alertmanager's webhook_configs)", ErrInvalid, n.Version)
	case n.GroupKey == "":
		return Notification{}, fmt.Errorf("%w: no groupKey", ErrInvalid)
	case n.Status != Firing && n.Status != Resolved:
		return Notification{}, fmt.Errorf("%w: status %q, want firing or resolved", ErrInvalid, n.Status)
	case len(n.Alerts) == 0:
		return Notification{}, fmt.Errorf("%w: no alerts", ErrInvalid)
	}
	for i, a := range n.Alerts {
		if len(a.Labels) == 0 {
			return Notification{}, fmt.Errorf("%w: alerts[%d] has no labels", ErrInvalid, i)
		}
		if a.Status != Firing && a.Status != Resolved {
			return Notification{}, fmt.Errorf("%w: alerts[%d].status %q, want firing or resolved", ErrInvalid, i, a.Status)
		}
		if a.Fingerprint == "" {
			// Older senders leave it out: the labels identify the alert.
			n.Alerts[i].Fingerprint = fingerprintOf(a.Labels)
		}
	}
	return n, nil
}
