package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

// CreateToken stores a new API token; an existing id or hash fails.
func (s *Store) CreateToken(ctx context.Context, t core.APIToken) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO api_tokens (id, person, hash, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5)`,
			t.ID, t.Person, t.Hash, t.CreatedAt, ts(t.RevokedAt))
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
		rows, err := q.Query(ctx, `SELECT id, person, hash, created_at, revoked_at FROM api_tokens ORDER BY created_at, id`)
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
		t, err = scanToken(q.QueryRow(ctx, `SELECT id, person, hash, created_at, revoked_at FROM api_tokens WHERE hash = $1`, hash))
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

func scanToken(row pgx.Row) (core.APIToken, error) {
	var t core.APIToken
	var revoked *time.Time
	err := row.Scan(&t.ID, &t.Person, &t.Hash, &t.CreatedAt, &revoked)
	t.CreatedAt, t.RevokedAt = t.CreatedAt.UTC(), fromTS(revoked)
	return t, err
}
