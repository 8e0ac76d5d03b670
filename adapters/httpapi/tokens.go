package httpapi

import (
	"net/http"
	"time"

	"github.com/opsgate/opsgate/core"
)

// tokenView is one token as GET /api/v1/tokens lists it: never the
// token itself (only its hash is stored) nor the hash.
type tokenView struct {
	core.APIToken
	// Expired is computed at the time of the request.
	Expired bool `json:"expired"`
}

// tokens answers GET /api/v1/tokens: the caller's own tokens, every
// token for an admin (docs/design.md §17), oldest first.
func (a *API) tokens(w http.ResponseWriter, r *http.Request, who core.Actor) {
	all, err := a.o.Tokens.Tokens(r.Context())
	if err != nil {
		a.fail(w, "tokens", err)
		return
	}
	v, now := viewerOf(r), time.Now()
	out := []tokenView{}
	for _, t := range all {
		if v.all || t.Person == who.Name {
			out = append(out, tokenView{APIToken: t, Expired: t.Expired(now)})
		}
	}
	a.reply(w, http.StatusOK, map[string]any{"tokens": out})
}
