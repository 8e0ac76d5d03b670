package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

// CreateToken stores a new API token; an existing id or hash fails.
func (s *Store) CreateToken(ctx context.Context, t core.APIToken) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO api_tokens (id, person, hash, created_at, revoked_at, scopes, expires_at, last_used_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			t.ID, t.Person, t.Hash, t.CreatedAt, ts(t.RevokedAt), strings.Join(t.Scopes, ","), ts(t.ExpiresAt), ts(t.LastUsedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: create token: %w", err)
	}
	return nil
}

// Tokens returns every API token, revoked ones too, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]core.APIToken, error) {
	var out []core.APIToken
	err := s.read(ctx, func(q querier) error {
		rows, err := q.Query(ctx, `SELECT `+tokenColumns+` FROM api_tokens ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (core.APIToken, error) { return scanToken(row) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: tokens: %w", err)
	}
	return out, nil
}

// RevokeToken marks token id revoked at at; revoking it again keeps the
// first time. An unknown id is core.ErrNotFound.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2`, at, id)
		if err == nil && tag.RowsAffected() == 0 {
			err = core.ErrNotFound
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: revoke token %q: %w", id, err)
	}
	return nil
}

// TokenByHash returns the token whose hash is hash, revoked or not, or an
// error wrapping core.ErrNotFound.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (core.APIToken, error) {
	var t core.APIToken
	err := s.read(ctx, func(q querier) error {
		var err error
		t, err = scanToken(q.QueryRow(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE hash = $1`, hash))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		err = core.ErrNotFound
	}
	if err != nil {
		return core.APIToken{}, fmt.Errorf("postgres: token by hash: %w", err)
	}
	return t, nil
}

// TouchToken records that token id was used at at (last use only moves
// forward). An unknown id is not an error: the token may just have been
// deleted.
func (s *Store) TouchToken(ctx context.Context, id string, at time.Time) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE api_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)`, at, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: touch token %q: %w", id, err)
	}
	return nil
}

const tokenColumns = `id, person, hash, created_at, revoked_at, scopes, expires_at, last_used_at`

func scanToken(row pgx.Row) (core.APIToken, error) {
	var t core.APIToken
	var revoked, expires, used *time.Time
	var scopes string
	err := row.Scan(&t.ID, &t.Person, &t.Hash, &t.CreatedAt, &revoked, &scopes, &expires, &used)
	t.CreatedAt, t.RevokedAt = t.CreatedAt.UTC(), fromTS(revoked)
	t.Scopes, t.ExpiresAt, t.LastUsedAt = []string{}, fromTS(expires), fromTS(used)
	if scopes != "" {
		t.Scopes = strings.Split(scopes, ",")
	}
	return t, err
}
