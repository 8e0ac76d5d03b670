package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core/incident"
)

var _ incident.Store = (*Store)(nil)

// LatestIncident returns the alert group's newest incident.
func (s *Store) LatestIncident(ctx context.Context, groupKey string) (incident.Record, bool, error) {
	return s.oneIncident(ctx, `SELECT version, data FROM incidents WHERE group_key = $1 ORDER BY seq DESC LIMIT 1`, groupKey)
}

// Incident returns the incident whose conversation is key.
func (s *Store) Incident(ctx context.Context, key string) (incident.Record, bool, error) {
	return s.oneIncident(ctx, `SELECT version, data FROM incidents WHERE key = $1`, key)
}

// IncidentByThread returns the incident shown in chat conversation thread.
func (s *Store) IncidentByThread(ctx context.Context, thread string) (incident.Record, bool, error) {
	if thread == "" {
		return incident.Record{}, false, nil
	}
	return s.oneIncident(ctx, `SELECT version, data FROM incidents WHERE thread = $1 AND thread <> '' ORDER BY seq DESC LIMIT 1`, thread)
}

func (s *Store) oneIncident(ctx context.Context, q string, arg string) (incident.Record, bool, error) {
	var version int64
	var data []byte
	err := s.read(ctx, func(db querier) error { return db.QueryRow(ctx, q, arg).Scan(&version, &data) })
	if errors.Is(err, pgx.ErrNoRows) {
		return incident.Record{}, false, nil
	}
	if err != nil {
		return incident.Record{}, false, fmt.Errorf("postgres: incident %q: %w", arg, err)
	}
	var r incident.Record
	if err := json.Unmarshal(data, &r); err != nil {
		return incident.Record{}, false, fmt.Errorf("postgres: incident %q: %w", arg, err)
	}
	r.Version = version
	return r, true, nil
}

// SaveIncident inserts (Version 0) or compare-and-sets r; see
// incident.Store. Of two replicas inserting a group's next incident, or
// updating the same version, exactly one wins.
func (s *Store) SaveIncident(ctx context.Context, r incident.Record) (incident.Record, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return r, fmt.Errorf("postgres: save incident %s: %w", r.Key, err)
	}
	var n int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var q string
		var args []any
		if r.Version == 0 {
			q = `INSERT INTO incidents (key, group_key, seq, thread, status, opened_at, updated_at, version, data)
				VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8) ON CONFLICT DO NOTHING`
			args = []any{r.Key, r.GroupKey, r.Seq, r.Thread, r.Status, r.OpenedAt, r.UpdatedAt, data}
		} else {
			q = `UPDATE incidents SET thread = $1, status = $2, updated_at = $3, version = version + 1, data = $4
				WHERE key = $5 AND version = $6`
			args = []any{r.Thread, r.Status, r.UpdatedAt, data, r.Key, r.Version}
		}
		tag, err := tx.Exec(ctx, q, args...)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return r, fmt.Errorf("postgres: save incident %s: %w", r.Key, err)
	}
	if n == 0 {
		return r, incident.ErrConflict
	}
	r.Version++
	return r, nil
}
