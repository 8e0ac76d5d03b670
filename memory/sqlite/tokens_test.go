package sqlite_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/adapters/httpapi/apistoretest"
)

// What the HTTP API needs beyond core.Store: tokens, a conversation's
// runs, the pending approvals.
func TestAPIStore(t *testing.T) {
	apistoretest.Run(t, func(t *testing.T) apistoretest.Store {
		return open(t, filepath.Join(t.TempDir(), "opsgate.db"))
	})
}

// A token stored before scopes existed (a row without the columns 0013
// added, as an older opsgate wrote it) keeps working: the default scopes,
// no expiry.
func TestTokenFromBeforeScopes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opsgate.db")
	s := open(t, path)
	secret, tok, err := httpapi.NewToken("alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw(t, path).Exec(`INSERT INTO api_tokens (id, person, hash, created_at) VALUES (?, ?, ?, ?)`,
		tok.ID, tok.Person, tok.Hash, tok.CreatedAt.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	got, err := s.TokenByHash(t.Context(), httpapi.HashToken(secret))
	if err != nil || !slices.Equal(got.Scopes, httpapi.DefaultScopes) || !got.ExpiresAt.IsZero() {
		t.Fatalf("old token = %+v, %v; want scopes %v and no expiry", got, err, httpapi.DefaultScopes)
	}
}
