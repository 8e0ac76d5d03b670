package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/opsgate/opsgate/core/incident"
)

// HookAlertmanager is the path Alertmanager's webhook posts to
// (docs/design.md §19).
const HookAlertmanager = "/hooks/alertmanager"

// intakeTimeout bounds applying one notification (posting to a chat,
// starting the triage).
const intakeTimeout = 2 * time.Minute

// AlertIntake takes Alertmanager's notifications (incident.Service).
type AlertIntake interface {
	// Take applies a notification; an error means it was not (fully)
	// applied and Alertmanager should send it again.
	Take(ctx context.Context, n incident.Notification) error
}

// AlertmanagerHook is the handler of POST /hooks/alertmanager. The checks
// come in a fixed order and each ends the request before anything is
// posted or stored: a token (401), its scope hook (403: a token for the
// API does not feed alerts, and a hook token reaches nothing else), the
// body's size (413 over 1 MiB), the payload (400 for anything but
// Alertmanager's version 4 JSON). A notification the intake could not
// apply is 500, which Alertmanager retries.
func (a *API) AlertmanagerHook(intake AlertIntake) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path+"; allowed: POST")
			return
		}
		tok, err := a.authenticate(r)
		switch {
		case err == errExpired:
			w.Header().Set("WWW-Authenticate", `Bearer realm="opsgate", error="invalid_token", error_description="the token expired"`)
			writeError(w, http.StatusUnauthorized, "token_expired", "this token expired; create a new one (opsgate token create --person NAME --scope hook)")
			return
		case err == errUnauthorized:
			w.Header().Set("WWW-Authenticate", `Bearer realm="opsgate"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "a token with scope hook is required: Authorization: Bearer <token> (opsgate token create --person NAME --scope hook)")
			return
		case err != nil:
			a.log.Error("hooks: looking up a token", "err", err)
			writeError(w, http.StatusServiceUnavailable, "unavailable", "the token could not be checked; try again")
			return
		case !hasScope(tok.Scopes, ScopeHook):
			insufficient(w, ScopeHook)
			return
		}
		if r.ContentLength > MaxBody {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", "the request body is over 1 MiB")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				writeError(w, http.StatusRequestEntityTooLarge, "too_large", "the request body is over 1 MiB")
				return
			}
			writeError(w, http.StatusBadRequest, "bad_request", "the request body could not be read")
			return
		}
		n, err := incident.Parse(body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_notification", a.o.Redact(err.Error()))
			return
		}
		// Once taken, a notification is applied whole, also when
		// Alertmanager stops waiting for the answer.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), intakeTimeout)
		defer cancel()
		if err := intake.Take(ctx, n); err != nil {
			a.log.Error("hooks: alertmanager notification not applied; Alertmanager will send it again",
				"group", n.GroupKey, "status", n.Status, "by", tok.Person, "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "the notification could not be applied; see opsgate's log")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{\"ok\":true}\n")
	})
}
