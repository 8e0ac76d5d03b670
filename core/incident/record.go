package incident

import (
	"errors"
	"slices"
	"time"
)

// Record is an incident as the store keeps it: which alert group it is
// for, where it is shown, what is known of its alerts and when it was last
// triaged. It survives restarts and is shared by replicas; Version makes
// its updates compare-and-set (see Store.SaveIncident).
type Record struct {
	Key      string `json:"key"`       // incident:<hash>
	GroupKey string `json:"group_key"` // Alertmanager's groupKey
	Seq      int    `json:"seq"`       // 1 for a group's first incident, then 2, …
	Receiver string `json:"receiver"`
	// To is the target's place ("slack:C0OPS"); Target its index in
	// incidents.targets when it opened.
	To     string `json:"to"`
	Target int    `json:"target"`
	// Thread is the conversation key of the chat place the incident is
	// shown in (a Slack or Discord thread, a Telegram message's replies);
	// Root names its root message for edits. Both are empty until posted.
	Thread string `json:"thread"`
	Root   string `json:"root"`
	Status string `json:"status"` // firing | resolved
	// Alerts are the alerts seen in the group, in the order they came.
	Alerts        []Known `json:"alerts"`
	Notifications int     `json:"notifications"`
	// History is what happened to the alerts, in order (the timeline reads it).
	History    []Change  `json:"history"`
	OpenedAt   time.Time `json:"opened_at"`
	TriagedAt  time.Time `json:"triaged_at"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Version is the store's: 0 for a record never saved.
	Version int64 `json:"-"`
}

// Known is an alert of an incident.
type Known struct {
	Fingerprint  string            `json:"fingerprint"`
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"starts_at"`
	EndsAt       time.Time         `json:"ends_at,omitzero"`
	GeneratorURL string            `json:"generator_url,omitempty"`
}

// Name is the alert's alertname label.
func (k Known) Name() string { return nameOf(k.Labels) }

// Severity is the alert's severity label.
func (k Known) Severity() string { return k.Labels["severity"] }

// Change is one thing that happened to an alert: it fired (At is its
// startsAt) or resolved (At is its endsAt); Received is when opsgate
// learnt it.
type Change struct {
	Kind        string    `json:"kind"` // fired | resolved
	Fingerprint string    `json:"fingerprint"`
	Alert       string    `json:"alert"`
	At          time.Time `json:"at"`
	Received    time.Time `json:"received"`
}

// Kinds of Change.
const (
	ChangeFired    = "fired"
	ChangeResolved = "resolved"
)

// ErrConflict is what Store.SaveIncident returns when the record changed
// (or was created) since it was read: read again and decide again.
var ErrConflict = errors.New("incident: changed meanwhile")

// Firing returns the alerts still firing.
func (r Record) Firing() []Known {
	var out []Known
	for _, k := range r.Alerts {
		if k.Status == Firing {
			out = append(out, k)
		}
	}
	return out
}

// Lead is the alert the root is about: the first still firing, else the
// first.
func (r Record) Lead() Known {
	if f := r.Firing(); len(f) > 0 {
		return f[0]
	}
	if len(r.Alerts) > 0 {
		return r.Alerts[0]
	}
	return Known{}
}

// StartedAt is when its earliest alert started.
func (r Record) StartedAt() time.Time {
	var t time.Time
	for _, k := range r.Alerts {
		if t.IsZero() || k.StartsAt.Before(t) {
			t = k.StartsAt
		}
	}
	if t.IsZero() {
		return r.OpenedAt
	}
	return t
}

// Duration is how long the incident lasted: from its earliest alert's
// start to its latest end (to now while it fires).
func (r Record) Duration(now time.Time) time.Duration {
	end := now
	if r.Status == Resolved {
		end = time.Time{}
		for _, k := range r.Alerts {
			if k.EndsAt.After(end) {
				end = k.EndsAt
			}
		}
		if end.IsZero() {
			end = r.ResolvedAt
		}
	}
	d := end.Sub(r.StartedAt())
	if d < 0 {
		d = 0
	}
	return d
}

// Plan is what one notification does to a group's incident.
type Plan struct {
	// Next is the record to save (the new incident when Open).
	Next Record
	// Open: a new incident (post its root, then triage).
	Open bool
	// Triage: start a triage run (on Open, and for a group still firing
	// after retrigger_after).
	Triage bool
	// Joined are alerts new to the group, to post in the thread.
	Joined []Known
	// Ended are alerts that resolved while others still fire.
	Ended []Known
	// Refired: the group fires again within retrigger_after of its
	// resolve: the same incident goes on.
	Refired bool
	// Resolved: the group resolved: post it and mark the root.
	Resolved bool
	// Ignore: nothing to do (a resolve of a group never seen, or one
	// already resolved).
	Ignore bool
}

// Decide works out what notification n, arriving at now for target index
// target, does to the group's latest incident cur (nil: none yet). Later
// notifications update the incident and start nothing within retrigger of
// its last triage; after it, a group that had resolved opens a new
// incident and one still firing is triaged again.
func Decide(cur *Record, n Notification, target int, to string, now time.Time, retrigger time.Duration) Plan {
	now = now.UTC()
	if cur == nil || cur.Status == Resolved && n.Status == Firing && now.Sub(cur.TriagedAt) >= retrigger {
		if n.Status != Firing {
			return Plan{Ignore: true}
		}
		seq := 1
		if cur != nil {
			seq = cur.Seq + 1
		}
		r := Record{
			Key: Key(n.GroupKey, seq), GroupKey: n.GroupKey, Seq: seq, Receiver: n.Receiver, To: to, Target: target,
			Status: Firing, OpenedAt: now, TriagedAt: now, UpdatedAt: now,
		}
		merge(&r, n, now)
		return Plan{Next: r, Open: true, Triage: true}
	}
	r := *cur
	r.Alerts = slices.Clone(cur.Alerts)
	r.History = slices.Clone(cur.History)
	if r.Status == Resolved && n.Status == Resolved {
		r.Notifications++
		return Plan{Next: r, Ignore: true}
	}
	p := Plan{}
	joined, ended := merge(&r, n, now)
	r.UpdatedAt = now
	switch {
	case n.Status == Resolved:
		r.Status, r.ResolvedAt = Resolved, now
		p.Resolved = true
	case cur.Status == Resolved:
		r.Status, r.ResolvedAt = Firing, time.Time{}
		p.Refired = true
	default:
		p.Joined, p.Ended = joined, ended
		if now.Sub(r.TriagedAt) >= retrigger {
			r.TriagedAt = now
			p.Triage = true
		}
	}
	p.Next = r
	return p
}

// merge folds n's alerts into r: it returns the alerts new to r that fire
// and those that ended while the group goes on, and records each change.
func merge(r *Record, n Notification, now time.Time) (joined, ended []Known) {
	r.Notifications++
	if r.Receiver == "" {
		r.Receiver = n.Receiver
	}
	for _, a := range n.Alerts {
		i := slices.IndexFunc(r.Alerts, func(k Known) bool { return k.Fingerprint == a.Fingerprint })
		k := Known{Fingerprint: a.Fingerprint, Status: a.Status, Labels: a.Labels, Annotations: a.Annotations,
			StartsAt: a.StartsAt.UTC(), GeneratorURL: a.GeneratorURL}
		if a.Status == Resolved {
			k.EndsAt = a.EndsAt.UTC()
		}
		switch {
		case i < 0:
			r.Alerts = append(r.Alerts, k)
			if a.Status == Firing {
				r.History = append(r.History, Change{Kind: ChangeFired, Fingerprint: k.Fingerprint, Alert: k.Name(), At: k.StartsAt, Received: now})
				joined = append(joined, k)
			} else {
				r.History = append(r.History,
					Change{Kind: ChangeFired, Fingerprint: k.Fingerprint, Alert: k.Name(), At: k.StartsAt, Received: now},
					Change{Kind: ChangeResolved, Fingerprint: k.Fingerprint, Alert: k.Name(), At: k.EndsAt, Received: now})
			}
		case r.Alerts[i].Status == Firing && a.Status == Resolved:
			r.Alerts[i] = k
			r.History = append(r.History, Change{Kind: ChangeResolved, Fingerprint: k.Fingerprint, Alert: k.Name(), At: k.EndsAt, Received: now})
			ended = append(ended, k)
		case r.Alerts[i].Status == Resolved && a.Status == Firing:
			r.Alerts[i] = k
			r.History = append(r.History, Change{Kind: ChangeFired, Fingerprint: k.Fingerprint, Alert: k.Name(), At: k.StartsAt, Received: now})
			joined = append(joined, k)
		default:
			r.Alerts[i] = k
		}
	}
	return joined, ended
}

func nameOf(labels map[string]string) string {
	if n := labels["alertname"]; n != "" {
		return n
	}
	return "alert"
}
