package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/opsgate/opsgate/core"
)

// Visibility is what the API asks the policy about who may see which
// conversation (docs/design.md §17); policy.Holder implements it.
type Visibility interface {
	// Person is the person an identity belongs to (itself when unknown).
	Person(identity string) string
	// Identities are every identity of identity's person, identity
	// included: what they took part in under any of them counts.
	Identities(identity string) []string
	// InRole reports whether identity's person holds role.
	InRole(identity, role string) bool
	// CanSee reports whether identity's person may see conversation key,
	// tookPart saying whether they took part in it.
	CanSee(identity, key string, tookPart bool) bool
}

// Participation is what a store tells of who took part where (both
// stores implement it). Without it, taking part counts for nothing.
type Participation interface {
	// Participated returns the keys of the conversations in which one of
	// identities sent a message or asked for a run, or person voted on or
	// was eligible to decide an approval.
	Participated(ctx context.Context, identities []string, person string) ([]string, error)
}

// noPolicy is the visibility without a policy: no roles, no rules, a
// token sees what its identity took part in, terminal conversations never.
type noPolicy struct{}

func (noPolicy) Person(identity string) string       { return identity }
func (noPolicy) Identities(identity string) []string { return []string{identity} }
func (noPolicy) InRole(string, string) bool          { return false }
func (noPolicy) CanSee(_, key string, tookPart bool) bool {
	return tookPart && !strings.HasPrefix(key, "terminal:")
}

// viewer is who a request acts for and what they may see. What they took
// part in is read from the store once per request, when first needed.
type viewer struct {
	a     *API
	token core.APIToken
	actor core.Actor
	// all: the person holds role admin, or the token the admin scope.
	all bool

	once sync.Once
	took map[string]bool
	err  error
}

type viewerKey struct{}

func (a *API) newViewer(t core.APIToken) *viewer {
	actor := actorOfToken(t)
	return &viewer{a: a, token: t, actor: actor,
		all: hasScope(t.Scopes, ScopeAdmin) || a.visibility().InRole(actor.ID, "admin")}
}

func viewerOf(r *http.Request) *viewer {
	v, _ := r.Context().Value(viewerKey{}).(*viewer)
	if v == nil {
		return &viewer{}
	}
	return v
}

func (a *API) visibility() Visibility {
	if a.o.Visibility == nil {
		return noPolicy{}
	}
	return a.o.Visibility
}

// sees reports whether the viewer may see conversation key.
func (v *viewer) sees(ctx context.Context, key string) (bool, error) {
	if v.all {
		return true, nil
	}
	v.once.Do(func() { v.took, v.err = v.participated(ctx) })
	if v.err != nil {
		return false, v.err
	}
	return v.a.visibility().CanSee(v.actor.ID, key, v.took[key]), nil
}

func (v *viewer) participated(ctx context.Context) (map[string]bool, error) {
	p, ok := v.a.o.Store.(Participation)
	if !ok {
		return nil, nil
	}
	vis := v.a.visibility()
	keys, err := p.Participated(ctx, vis.Identities(v.actor.ID), vis.Person(v.actor.ID))
	if err != nil {
		return nil, err
	}
	took := make(map[string]bool, len(keys))
	for _, k := range keys {
		took[k] = true
	}
	return took, nil
}

// visible keeps the items whose conversation (keyOf) the viewer may see;
// an item of no conversation (an empty key) only an admin sees.
func visible[T any](ctx context.Context, v *viewer, items []T, keyOf func(T) string) ([]T, error) {
	if v.all {
		return items, nil
	}
	out := items[:0:0]
	for _, it := range items {
		k := keyOf(it)
		if k == "" {
			continue
		}
		ok, err := v.sees(ctx, k)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, it)
		}
	}
	return out, nil
}
