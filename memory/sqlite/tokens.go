package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// CreateToken stores a new API token; an existing id or hash fails.
func (s *Store) CreateToken(ctx context.Context, t core.APIToken) error {
	_, err := s.w.exec(ctx, `INSERT INTO api_tokens (id, person, hash, created_at, revoked_at, scopes, expires_at, last_used_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Person, t.Hash, t.CreatedAt.UnixMicro(), micros(t.RevokedAt), strings.Join(t.Scopes, ","), micros(t.ExpiresAt), micros(t.LastUsedAt))
	if err != nil {
		return fmt.Errorf("sqlite: create token: %w", err)
	}
	return nil
}

// Tokens returns every API token, revoked ones too, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]core.APIToken, error) {
	rows, err := s.r.query(ctx, `SELECT `+tokenColumns+` FROM api_tokens ORDER BY created_at, id`)
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
	t, err := scanToken(s.r.queryRow(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		err = core.ErrNotFound
	}
	if err != nil {
		return core.APIToken{}, fmt.Errorf("sqlite: token by hash: %w", err)
	}
	return t, nil
}

// TouchToken records that token id was used at at (last use only moves
// forward). An unknown id is not an error: the token may just have been
// deleted.
func (s *Store) TouchToken(ctx context.Context, id string, at time.Time) error {
	_, err := s.w.exec(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
		at.UnixMicro(), id, at.UnixMicro())
	if err != nil {
		return fmt.Errorf("sqlite: touch token %q: %w", id, err)
	}
	return nil
}

const tokenColumns = `id, person, hash, created_at, revoked_at, scopes, expires_at, last_used_at`

func scanToken(row scanner) (core.APIToken, error) {
	var t core.APIToken
	var created int64
	var revoked, expires, used sql.NullInt64
	var scopes string
	err := row.Scan(&t.ID, &t.Person, &t.Hash, &created, &revoked, &scopes, &expires, &used)
	t.CreatedAt, t.RevokedAt = time.UnixMicro(created).UTC(), fromMicros(revoked)
	t.Scopes, t.ExpiresAt, t.LastUsedAt = splitScopes(scopes), fromMicros(expires), fromMicros(used)
	return t, err
}

// splitScopes reads the scopes column: names joined by commas.
func splitScopes(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}
