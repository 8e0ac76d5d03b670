package core

import "time"

// APIToken is a bearer token of the HTTP API (docs/design.md §15) as the stores
// keep it: the secret itself is never stored, only its SHA-256, so a copy
// of the database grants nothing. A token acts as the identity
// "api:"+Person, so policy applies to it as to that person's chat clicks.
type APIToken struct {
	ID     string `json:"id"`
	Person string `json:"person"`
	// Hash is the SHA-256 of the token as the client sends it.
	Hash      []byte    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	// RevokedAt is zero while the token is valid.
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	// Scopes are what the token may do (docs/design.md §17): read, write,
	// approve, hook, admin. A token made before scopes existed has the
	// default ones.
	Scopes []string `json:"scopes"`
	// ExpiresAt is when the token stops working; zero is never.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// LastUsedAt is when it last authenticated a request (kept to the
	// minute: see the API's authentication); zero is never.
	LastUsedAt time.Time `json:"last_used_at,omitzero"`
}

// Expired reports whether the token has expired at now.
func (t APIToken) Expired(now time.Time) bool {
	return !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt)
}
