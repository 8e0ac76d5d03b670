package timeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/incident"
)

// Conversations lists a store's conversations (core.Store's).
type Conversations interface {
	Conversations(ctx context.Context, f core.ConversationFilter) ([]core.Conversation, error)
}

// OfConversation is the timeline of the stored conversation key, from a
// store that keeps timelines (FromStore); a key the store does not hold is
// an error, as is a store that keeps no timelines.
func OfConversation(ctx context.Context, store Conversations, key string) (Timeline, error) {
	src, ok := FromStore(store)
	if !ok {
		return Timeline{}, errors.New("this store keeps no timelines")
	}
	cs, err := store.Conversations(ctx, core.ConversationFilter{KeyPrefix: key})
	if err != nil {
		return Timeline{}, err
	}
	for _, c := range cs {
		if c.Key == key {
			t, err := Build(ctx, src, key, c.Title)
			if errors.Is(err, ErrEmpty) {
				err = nil
			}
			return t, err
		}
	}
	return Timeline{}, fmt.Errorf("no conversation %q (opsgate conversations are listed by GET /api/v1/conversations)", key)
}

// incidentTimelines is a store as the source of timelines: its records,
// and for an incident conversation the alerts its intake keeps
// (Alerts), which outlive the events.
type incidentTimelines struct {
	Source
	incidents incident.Store // nil: the store keeps no incidents
	approvals ApprovalReader // nil: the store keeps no approvals
}

// Approval is the store's (ApprovalReader).
func (s incidentTimelines) Approval(ctx context.Context, id string) (core.Approval, error) {
	if s.approvals == nil {
		return core.Approval{}, core.ErrNotFound
	}
	return s.approvals.Approval(ctx, id)
}

// FromStore returns store as a timeline source, or false: its records,
// and the alerts of incident conversations when it keeps incidents
// (core/incident), the approvals when it keeps them.
func FromStore(store any) (Source, bool) {
	src, ok := store.(Source)
	if !ok {
		return nil, false
	}
	is, _ := store.(incident.Store)
	ar, _ := store.(ApprovalReader)
	return incidentTimelines{Source: src, incidents: is, approvals: ar}, true
}

// AlertChanges are the fired and resolved alerts of the incident whose
// conversation (or chat thread) is key; none for other conversations.
func (s incidentTimelines) AlertChanges(ctx context.Context, key string) ([]AlertChange, error) {
	if s.incidents == nil {
		return nil, nil
	}
	r, ok, err := s.incidents.Incident(ctx, key)
	if err == nil && !ok {
		r, ok, err = s.incidents.IncidentByThread(ctx, key)
	}
	if err != nil || !ok {
		return nil, err
	}
	known := map[string]incident.Known{}
	for _, k := range r.Alerts {
		known[k.Fingerprint] = k
	}
	out := make([]AlertChange, 0, len(r.History))
	for _, c := range r.History {
		k := known[c.Fingerprint]
		out = append(out, AlertChange{Resolved: c.Kind == incident.ChangeResolved, Name: cmp.Or(c.Alert, k.Name()),
			Severity: k.Severity(), Summary: cmp.Or(k.Annotations["summary"], k.Annotations["description"]),
			Fingerprint: c.Fingerprint, Receiver: r.Receiver, At: c.At, Received: c.Received})
	}
	return out, nil
}
