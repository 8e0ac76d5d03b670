package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// TokenPrefix starts every API token, so that one pasted by mistake is
// recognisable (and caught by secret scanners).
const TokenPrefix = "og_"

// TokenStore keeps API tokens (both stores implement it). Every method is
// safe for concurrent use, also by several processes on one database, so
// `opsgate token` works while serve runs.
type TokenStore interface {
	// CreateToken stores a new token; an existing id or hash fails.
	CreateToken(ctx context.Context, t core.APIToken) error
	// Tokens returns every token, revoked ones too, oldest first.
	Tokens(ctx context.Context) ([]core.APIToken, error)
	// RevokeToken marks a token revoked; an unknown id is core.ErrNotFound.
	RevokeToken(ctx context.Context, id string, at time.Time) error
	// TokenByHash returns the token with this hash, revoked or not, or
	// core.ErrNotFound.
	TokenByHash(ctx context.Context, hash []byte) (core.APIToken, error)
	// TouchToken records a token's use at a time (it only moves forward).
	TouchToken(ctx context.Context, id string, at time.Time) error
}

// touchEvery is how stale a token's last use may get before a request
// records it again: last use is shown to the minute, and a write per
// request would cost more than the request.
const touchEvery = time.Minute

// NewToken makes a token for person: 32 random bytes after TokenPrefix,
// with the default scopes and expiry (DefaultScopes, DefaultExpiry).
// secret is what the client sends, shown once; t is what is stored.
func NewToken(person string, now time.Time) (secret string, t core.APIToken, err error) {
	var raw [32]byte
	var id [6]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", core.APIToken{}, fmt.Errorf("httpapi: new token: %w", err)
	}
	if _, err := rand.Read(id[:]); err != nil {
		return "", core.APIToken{}, fmt.Errorf("httpapi: new token: %w", err)
	}
	secret = TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	return secret, core.APIToken{ID: "tok_" + hex.EncodeToString(id[:]), Person: person, Hash: HashToken(secret), CreatedAt: now.UTC(),
		Scopes: slices.Clone(DefaultScopes), ExpiresAt: now.UTC().Add(DefaultExpiry)}, nil
}

// HashToken is what the stores keep of a token.
func HashToken(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// authenticate finds the request's token and returns it. The store finds
// the token by its hash; the hashes are then compared in constant time,
// so no timing tells how much of a guess was right. A missing, unknown or
// revoked token is errUnauthorized, an expired one errExpired; any other
// error is the store's.
func (a *API) authenticate(r *http.Request) (core.APIToken, error) {
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	secret = strings.TrimSpace(secret)
	if !ok || !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(secret, TokenPrefix) {
		return core.APIToken{}, errUnauthorized
	}
	hash := HashToken(secret)
	t, err := a.o.Tokens.TokenByHash(r.Context(), hash)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return core.APIToken{}, errUnauthorized
	case err != nil:
		return core.APIToken{}, err
	case subtle.ConstantTimeCompare(t.Hash, hash) != 1 || !t.RevokedAt.IsZero():
		return core.APIToken{}, errUnauthorized
	}
	now := time.Now()
	if t.Expired(now) {
		return core.APIToken{}, errExpired
	}
	if now.Sub(t.LastUsedAt) >= touchEvery {
		// Best effort: a token that works is not refused because its
		// last use could not be written.
		if err := a.o.Tokens.TouchToken(r.Context(), t.ID, now); err != nil {
			a.log.Warn("api: recording a token's use", "token", t.ID, "err", err)
		}
	}
	return t, nil
}

// actorOfToken is the identity a token acts as.
func actorOfToken(t core.APIToken) core.Actor {
	return core.Actor{ID: "api:" + t.Person, Name: t.Person}
}

var (
	errUnauthorized = errors.New("unauthorized")
	errExpired      = errors.New("token expired")
)
