package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/opsgate/opsgate/core"
)

// CreateToken stores a new API token; an existing id or hash fails.
func (s *Store) CreateToken(ctx context.Context, t core.APIToken) error {
	_, err := s.w.exec(ctx, `INSERT INTO api_tokens (id, person, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?)`,
		t.ID, t.Person, t.Hash, t.CreatedAt.UnixMicro(), micros(t.RevokedAt))
	if err != nil {
		return fmt.Errorf("sqlite: create token: %w", err)
	}
	return nil
}

// Tokens returns every API token, revoked ones too, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]core.APIToken, error) {
	rows, err := s.r.query(ctx, `SELECT id, person, hash, created_at, revoked_at FROM api_tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tokens: %w", err)
	}
	defer rows.Close()
	var out []core.APIToken
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: tokens: %w", err)
	}
	return out, nil
}

// RevokeToken marks token id revoked at at; revoking it again keeps the
// first time. An unknown id is core.ErrNotFound.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	res, err := s.w.exec(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, at.UnixMicro(), id)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			err = core.ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("sqlite: revoke token %q: %w", id, err)
	}
	return nil
}

// TokenByHash returns the token whose hash is hash, revoked or not, or an
// error wrapping core.ErrNotFound.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (core.APIToken, error) {
	t, err := scanToken(s.r.queryRow(ctx, `SELECT id, person, hash, created_at, revoked_at FROM api_tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		err = core.ErrNotFound
	}
	if err != nil {
		return core.APIToken{}, fmt.Errorf("sqlite: token by hash: %w", err)
	}
	return t, nil
}

func scanToken(row scanner) (core.APIToken, error) {
	var t core.APIToken
	var created int64
	var revoked sql.NullInt64
	err := row.Scan(&t.ID, &t.Person, &t.Hash, &created, &revoked)
	t.CreatedAt, t.RevokedAt = time.UnixMicro(created).UTC(), fromMicros(revoked)
	return t, err
}
