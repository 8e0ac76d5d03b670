package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/opsgate/opsgate/core/incident"
)

var _ incident.Store = (*Store)(nil)

// LatestIncident returns the alert group's newest incident.
func (s *Store) LatestIncident(ctx context.Context, groupKey string) (incident.Record, bool, error) {
	return s.oneIncident(ctx, `SELECT version, data FROM incidents WHERE group_key = ? ORDER BY seq DESC LIMIT 1`, groupKey)
}

// Incident returns the incident whose conversation is key.
func (s *Store) Incident(ctx context.Context, key string) (incident.Record, bool, error) {
	return s.oneIncident(ctx, `SELECT version, data FROM incidents WHERE key = ?`, key)
}

// IncidentByThread returns the incident shown in chat conversation thread.
func (s *Store) IncidentByThread(ctx context.Context, thread string) (incident.Record, bool, error) {
	if thread == "" {
		return incident.Record{}, false, nil
	}
	return s.oneIncident(ctx, `SELECT version, data FROM incidents WHERE thread = ? AND thread <> '' ORDER BY seq DESC LIMIT 1`, thread)
}

func (s *Store) oneIncident(ctx context.Context, q string, arg string) (incident.Record, bool, error) {
	var version int64
	var data string
	err := s.r.queryRow(ctx, q, arg).Scan(&version, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return incident.Record{}, false, nil
	}
	if err != nil {
		return incident.Record{}, false, fmt.Errorf("sqlite: incident %q: %w", arg, err)
	}
	var r incident.Record
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return incident.Record{}, false, fmt.Errorf("sqlite: incident %q: %w", arg, err)
	}
	r.Version = version
	return r, true, nil
}

// SaveIncident inserts (Version 0) or compare-and-sets r; see
// incident.Store.
func (s *Store) SaveIncident(ctx context.Context, r incident.Record) (incident.Record, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return r, fmt.Errorf("sqlite: save incident %s: %w", r.Key, err)
	}
	var res sql.Result
	if r.Version == 0 {
		res, err = s.w.exec(ctx, `INSERT INTO incidents (key, group_key, seq, thread, status, opened_at, updated_at, version, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT DO NOTHING`,
			r.Key, r.GroupKey, r.Seq, r.Thread, r.Status, r.OpenedAt.UnixMicro(), r.UpdatedAt.UnixMicro(), string(data))
	} else {
		res, err = s.w.exec(ctx, `UPDATE incidents SET thread = ?, status = ?, updated_at = ?, version = version + 1, data = ?
			WHERE key = ? AND version = ?`,
			r.Thread, r.Status, r.UpdatedAt.UnixMicro(), string(data), r.Key, r.Version)
	}
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil {
		return r, fmt.Errorf("sqlite: save incident %s: %w", r.Key, err)
	}
	if n == 0 {
		return r, incident.ErrConflict
	}
	r.Version++
	return r, nil
}
