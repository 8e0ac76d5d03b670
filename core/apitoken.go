package core

import "time"

// APIToken is a bearer token of the HTTP API (DESIGN §15) as the stores
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
}
