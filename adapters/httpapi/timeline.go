package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/timeline"
)

// timeline answers GET /api/v1/conversations/{key}/timeline: the
// conversation's steps under a header (docs/design.md §19), as `opsgate
// incident report --format json` prints them. Who may not see the
// conversation gets the 404 of a missing one (guard).
func (a *API) timeline(w http.ResponseWriter, r *http.Request, _ core.Actor) {
	key := r.PathValue("key")
	c, ok := a.existing(w, r, key)
	if !ok {
		return
	}
	t, err := timeline.Build(r.Context(), timelineSource{a}, key, c.Title)
	if err != nil && !errors.Is(err, timeline.ErrEmpty) {
		a.fail(w, "timeline", err)
		return
	}
	a.reply(w, http.StatusOK, t)
}

// timelineSource reads a timeline's records from the store, and the
// alerts of an incident from Options.Alerts.
type timelineSource struct{ a *API }

func (s timelineSource) Messages(ctx context.Context, key string) ([]core.Message, error) {
	return s.a.o.Store.Messages(ctx, key)
}

func (s timelineSource) ConversationRuns(ctx context.Context, key string) ([]core.Run, error) {
	return s.a.o.Store.ConversationRuns(ctx, key)
}

func (s timelineSource) Audit(ctx context.Context, f core.AuditFilter) ([]core.AuditEntry, error) {
	return s.a.o.Store.Audit(ctx, f)
}

func (s timelineSource) AlertChanges(ctx context.Context, key string) ([]timeline.AlertChange, error) {
	if s.a.o.Alerts == nil {
		return nil, nil
	}
	return s.a.o.Alerts.AlertChanges(ctx, key)
}

func (s timelineSource) Approval(ctx context.Context, id string) (core.Approval, error) {
	return s.a.o.Store.Approval(ctx, id)
}
