package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/policy"
)

// Access (docs/design.md §17) is checked in two places only: admit, for every
// request (a valid, unexpired token that can reach /api/v1), and guard,
// around every route (the conversation the route is about must be
// visible — 404 otherwise, before any scope check, so that existence
// never leaks — and then the route's scope). Lists filter themselves
// through the request's viewer (visibility.go).

// routeAccess is what each route needs: a scope, and how to find the
// conversation it is about (nil for lists and for routes about none). A
// route missing here needs the admin scope: a new route is closed until
// it says what it needs.
var routeAccess = map[string]access{
	"GET /api/v1/conversations":                 {scope: ScopeRead},
	"GET /api/v1/conversations/{key}":           {scope: ScopeRead, conv: pathConv},
	"POST /api/v1/conversations/{key}/messages": {scope: ScopeWrite, conv: pathConv, create: true},
	"GET /api/v1/conversations/{key}/events":    {scope: ScopeRead, conv: pathConv},
	"GET /api/v1/conversations/{key}/timeline":  {scope: ScopeRead, conv: pathConv},
	"GET /api/v1/approvals":                     {scope: ScopeRead},
	"POST /api/v1/approvals/{id}/decision":      {scope: ScopeApprove, conv: approvalConv, counted: true},
	"POST /api/v1/runs/{id}/stop":               {scope: ScopeWrite, stop: true, conv: runConv},
	"GET /api/v1/audit":                         {scope: ScopeRead},
	"GET /api/v1/memory/search":                 {scope: ScopeRead},
	"GET /api/v1/schedules":                     {scope: ScopeRead},
	"GET /api/v1/tokens":                        {scope: ScopeRead},
}

type access struct {
	scope string
	// conv finds the key of the conversation the request is about. found
	// is false when the resource does not exist (the answer is then 404);
	// fresh is an API conversation no one holds yet (posting creates it).
	conv func(a *API, r *http.Request) (key string, found, fresh bool, err error)
	// create: the route may be about a fresh API conversation (posting
	// creates it). Otherwise only an admin, who would see it anyway, gets
	// past this check with one; anyone else could be reading the
	// conversation another person is about to start. (Following one
	// before it starts is 404 for everyone, from the handler.)
	create bool
	// stop: the route presses Stop, which policy.MayStop allows, as in
	// every chat: whoever may talk (scope, write) or decide approvals
	// (approve).
	stop bool
	// counted: a 404 here is told to Options.Decided, as the handler
	// tells the decisions it answers.
	counted bool
}

// admit authenticates the request; false means it was answered.
func (a *API) admit(w http.ResponseWriter, r *http.Request) (core.APIToken, bool) {
	tok, err := a.authenticate(r)
	switch {
	case err == errExpired:
		w.Header().Set("WWW-Authenticate", `Bearer realm="opsgate", error="invalid_token", error_description="the token expired"`)
		writeError(w, http.StatusUnauthorized, "token_expired", "this API token expired; create a new one (opsgate token create --person NAME [--expires 90d|never])")
		return tok, false
	case err == errUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="opsgate"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "a valid API token is required: Authorization: Bearer <token> (opsgate token create --person NAME)")
		return tok, false
	case err != nil:
		a.log.Error("api: looking up a token", "err", err)
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the token could not be checked; try again")
		return tok, false
	case !apiScopes(tok.Scopes):
		// A hook token is refused everywhere here, whatever the path: it
		// learns nothing of what exists.
		insufficient(w, ScopeRead+", "+ScopeWrite+", "+ScopeApprove+" or "+ScopeAdmin)
		return tok, false
	}
	return tok, true
}

// guard wraps the handler of pattern with its access check.
func (a *API) guard(pattern string, h func(http.ResponseWriter, *http.Request, core.Actor)) http.HandlerFunc {
	need, ok := routeAccess[pattern]
	if !ok {
		need = access{scope: ScopeAdmin}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		v := viewerOf(r)
		if need.conv != nil {
			key, found, fresh, err := need.conv(a, r)
			if err != nil {
				a.fail(w, "access", err)
				return
			}
			visible := found && (!fresh || need.create || v.all)
			if found && !fresh {
				if visible, err = v.sees(r.Context(), key); err != nil {
					a.fail(w, "access", err)
					return
				}
			}
			if !visible {
				if need.counted && a.o.Decided != nil {
					// A decision on what this person cannot see counts
					// as the 404 it gets, as a click on an unknown card.
					a.o.Decided(core.ErrNotFound)
				}
				writeKind(w, core.KindNotFound, notFoundText(r))
				return
			}
		}
		if !need.allows(v.token.Scopes) {
			insufficient(w, need.scopeText())
			return
		}
		h(w, r, v.actor)
	}
}

// allows reports whether a token with scopes may take the route.
func (need access) allows(scopes []string) bool {
	ok := hasScope(scopes, need.scope)
	if need.stop {
		ok = policy.MayStop(ok, hasScope(scopes, ScopeApprove))
	}
	return ok
}

// scopeText names the scopes the route takes.
func (need access) scopeText() string {
	if need.stop {
		return need.scope + " or " + ScopeApprove
	}
	return need.scope
}

func insufficient(w http.ResponseWriter, scope string) {
	writeError(w, http.StatusForbidden, "insufficient_scope", "this token lacks the scope "+scope+" (opsgate token create --scope)")
}

// notFoundText says what was not found, in the words the handlers use.
func notFoundText(r *http.Request) string {
	switch {
	case r.PathValue("key") != "":
		return "no conversation " + strconv.Quote(r.PathValue("key"))
	case strings.HasPrefix(r.URL.Path, Prefix+"approvals/"):
		return "approval " + r.PathValue("id") + " not found"
	default:
		return "run " + r.PathValue("id") + " not found"
	}
}

// pathConv is the {key} of the path. An "api:<name>" key no conversation
// has yet is fresh; a name not valid is left to the handler's 400.
func pathConv(a *API, r *http.Request) (string, bool, bool, error) {
	key := r.PathValue("key")
	c, err := a.find(r.Context(), key)
	switch {
	case err != nil:
		return "", false, false, err
	case c != nil:
		return key, true, false, nil
	case strings.HasPrefix(key, ConvPrefix):
		return key, true, true, nil
	}
	return "", false, false, nil
}

func approvalConv(a *API, r *http.Request) (string, bool, bool, error) {
	ap, err := a.o.Store.Approval(r.Context(), r.PathValue("id"))
	return notFoundOK(ap.ConvKey, err)
}

func runConv(a *API, r *http.Request) (string, bool, bool, error) {
	run, err := a.o.Store.Run(r.Context(), r.PathValue("id"))
	return notFoundOK(run.ConvKey, err)
}

func notFoundOK(key string, err error) (string, bool, bool, error) {
	switch {
	case err == nil:
		return key, true, false, nil
	case errors.Is(err, core.ErrNotFound):
		return "", false, false, nil
	}
	return "", false, false, err
}
