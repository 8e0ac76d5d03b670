package core

import "time"

// IdempotencyKey is an Idempotency-Key of the HTTP API's POST …/messages
// (docs/design.md §16) as the stores keep it: a repeat of the request within the
// key's lifetime starts nothing and is answered with RunID, the run the
// first request named (Inbound.RunID).
type IdempotencyKey struct {
	ConvKey string `json:"conv_key"`
	Key     string `json:"key"`
	// BodyHash is the SHA-256 of the request's body as the API reads it:
	// the same key with another body is refused, not answered.
	BodyHash  []byte    `json:"-"`
	RunID     string    `json:"run_id"`
	CreatedAt time.Time `json:"created_at"`
}
