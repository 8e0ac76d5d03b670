package core

import (
	"crypto/rand"
	"encoding/hex"
)

// newID returns 128 random bits as 32 hex characters: unguessable, and short
// enough for Telegram's 64-byte callback data with a prefix.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("core: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}
