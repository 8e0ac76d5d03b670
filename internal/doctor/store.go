package doctor

import (
	"context"
	"errors"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/apitokens"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/policy"
)

// What doctor asks of a store beyond core.Store; both stores have them, a
// store in a test may not.
type (
	pinger interface {
		Ping(ctx context.Context) error
	}
	migrator interface {
		SchemaVersion(ctx context.Context) (int, error)
		CheckSchema(ctx context.Context) error
	}
)

// location is store.url parsed (config.Load validated it).
func location(cfg *config.Config) memory.Location {
	loc, _ := memory.Parse(cfg.Store.URL)
	return loc
}

func (d *Doctor) checkStore(ctx context.Context, r *report, cfg *config.Config) {
	loc := location(cfg)
	store, err := d.OpenStore(ctx)
	var schemaErr *core.SchemaError
	switch {
	case errors.As(err, &schemaErr):
		r.fail("store", schemaFix(loc), "%v", err)
		// As audit verify: the chain may show an edit made meanwhile.
		if s, _, err := memory.OpenForInspection(ctx, cfg.Store.URL); err == nil {
			checkChain(ctx, r, s, loc, "")
			s.Close()
		}
		return
	case err != nil && loc.Kind == memory.Postgres:
		r.fail("store", "check that the server in store.url is reachable from here, that the user and password are right, "+
			"that the database exists, and that no newer opsgate migrated it", "%v", err)
		return
	case err != nil:
		r.fail("store", "check that the directory of store.url exists or can be created and is writable, and that no newer opsgate migrated it", "%v", err)
		return
	}
	defer store.Close()
	if p, ok := store.(pinger); ok {
		if err := p.Ping(ctx); err != nil {
			r.fail("store", "check the permissions and free space of "+loc.Where(), "%v", err)
			return
		}
	}
	m, ok := store.(migrator)
	if !ok {
		r.ok("store", "%s", loc)
		return
	}
	v, err := m.SchemaVersion(ctx)
	if err != nil {
		r.fail("store", "", "%v", err)
		return
	}
	r.ok("store", "%s (schema version %d)", loc, v)
	// Open checked the schema already; checking again here keeps this line
	// true even if Open stops doing so.
	if err := m.CheckSchema(ctx); err != nil {
		r.fail("audit", schemaFix(loc), "%v", err)
		return
	}
	// Triggers in place do not show an edit made while one was dropped
	// and then re-created: the hash chain does.
	checkChain(ctx, r, store, loc, "audit table and its append-only triggers in place; ")
}

// checkChain reports what the audit hash chain of store says, as audit
// verify does; a chain that holds is ok after okPrefix. With okPrefix ""
// the store's schema failed and was reported: only a break is added (an
// audit table that is gone cannot be read at all).
func checkChain(ctx context.Context, r *report, store core.Store, loc memory.Location, okPrefix string) {
	chain, err := core.VerifyAudit(ctx, store)
	switch {
	case err != nil && okPrefix == "":
	case err != nil:
		r.fail("audit", "", "reading the audit log: %v", err)
	case chain.Break != nil:
		r.fail("audit", "find out who changed "+loc.Where()+" and restore it from a backup; opsgate audit verify says the same",
			"%s", chain)
	case okPrefix != "":
		r.ok("audit", "%s%s", okPrefix, chain)
	}
}

// checkTokens counts the API tokens in use (returned, for nothingToServe)
// and warns about those whose person the policy file does not map (they
// have no role).
func (d *Doctor) checkTokens(ctx context.Context, r *report, cfg *config.Config) int {
	store, err := d.OpenStore(ctx)
	if err != nil {
		return 0 // checkStore said why
	}
	defer store.Close()
	ts, ok := store.(httpapi.TokenStore)
	if !ok {
		return 0
	}
	list, err := ts.Tokens(ctx)
	if err != nil {
		r.fail("api", "", "listing the API tokens: %v", err)
		return 0
	}
	active := apitokens.Active(list, time.Now())
	pol, err := policy.Load(cfg.Policy.File, d.PolicyOptions)
	if err != nil {
		return active // checkPolicy says why
	}
	for _, t := range list {
		if t.RevokedAt.IsZero() && cfg.Policy.File != "" && apitokens.Unmapped(pol, t.Person) {
			r.warn("api", "token %s: %s", t.ID, apitokens.UnmappedText(cfg.Policy.File, t.Person))
		}
	}
	r.ok("api", "%d API token(s) in use, on %s", active, cfg.Server.Listen)
	return active
}

// schemaFix is the advice for a store changed outside opsgate.
func schemaFix(loc memory.Location) string {
	return "find out who changed " + loc.Where() + " and restore it from a backup; opsgate does not recreate " +
		"what is missing, as the audit log may have been edited meanwhile"
}
