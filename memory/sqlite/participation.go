package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
)

// Participated returns the keys of the conversations one of identities
// took part in — sent a message (which also records who started an API
// conversation) or asked for a run — or in which person voted on an
// approval or was among those eligible to decide one (docs/design.md §17). Each
// key once, in no particular order.
func (s *Store) Participated(ctx context.Context, identities []string, person string) ([]string, error) {
	ids, err := json.Marshal(identities)
	if err != nil {
		return nil, fmt.Errorf("sqlite: participated: %w", err)
	}
	quoted, err := json.Marshal(person)
	if err != nil {
		return nil, fmt.Errorf("sqlite: participated: %w", err)
	}
	// The verdicts are JSON without an index: instr finds the few that
	// name the person at all before any is parsed.
	rows, err := s.r.query(ctx, `
		SELECT conv_key FROM inbound WHERE user_id IN (SELECT value FROM json_each(?1))
		UNION SELECT conv_key FROM runs WHERE requester_id IN (SELECT value FROM json_each(?1))
		UNION SELECT a.conv_key FROM approval_votes v JOIN approvals a ON a.id = v.approval_id WHERE v.person = ?2
		UNION SELECT a.conv_key FROM approval_votes v JOIN approvals a ON a.id = v.approval_id
			WHERE v.actor_id IN (SELECT value FROM json_each(?1))
		UNION SELECT conv_key FROM approvals
			WHERE instr(verdict, ?3) > 0
			AND ?2 IN (SELECT value FROM json_each(CASE WHEN json_valid(verdict) THEN verdict ELSE '{}' END, '$.eligible'))`,
		string(ids), person, string(quoted))
	if err != nil {
		return nil, fmt.Errorf("sqlite: participated: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("sqlite: participated: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: participated: %w", err)
	}
	return keys, nil
}
