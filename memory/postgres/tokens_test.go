package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/adapters/httpapi/apistoretest"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// What the HTTP API needs beyond core.Store: tokens, a conversation's
// runs, the pending approvals.
func TestAPIStore(t *testing.T) {
	apistoretest.Run(t, func(t *testing.T) apistoretest.Store { return open(t, pgtest.DB(t)) })
}

// A token stored before scopes existed (a row without the columns 0009
// added, as an older opsgate wrote it) keeps working: the default scopes,
// no expiry.
func TestTokenFromBeforeScopes(t *testing.T) {
	url := pgtest.DB(t)
	s := open(t, url)
	secret, tok, err := httpapi.NewToken("alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), `INSERT INTO api_tokens (id, person, hash, created_at) VALUES ($1, $2, $3, $4)`,
		tok.ID, tok.Person, tok.Hash, tok.CreatedAt); err != nil {
		t.Fatal(err)
	}
	got, err := s.TokenByHash(t.Context(), httpapi.HashToken(secret))
	if err != nil || !slices.Equal(got.Scopes, httpapi.DefaultScopes) || !got.ExpiresAt.IsZero() {
		t.Fatalf("old token = %+v, %v; want scopes %v and no expiry", got, err, httpapi.DefaultScopes)
	}
}
