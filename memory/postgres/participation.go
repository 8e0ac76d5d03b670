package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Participated returns the keys of the conversations one of identities
// took part in — sent a message (which also records who started an API
// conversation) or asked for a run — or in which person voted on an
// approval or was among those eligible to decide one (docs/design.md §17). Each
// key once, in no particular order.
func (s *Store) Participated(ctx context.Context, identities []string, person string) ([]string, error) {
	if identities == nil {
		identities = []string{}
	}
	quoted, err := json.Marshal(person)
	if err != nil {
		return nil, fmt.Errorf("postgres: participated: %w", err)
	}
	var keys []string
	err = s.read(ctx, func(q querier) error {
		// The verdicts are JSON text without an index: strpos finds the
		// few that name the person at all before any is parsed.
		rows, err := q.Query(ctx, `
			SELECT conv_key FROM inbound WHERE user_id = ANY($1)
			UNION SELECT conv_key FROM runs WHERE requester_id = ANY($1)
			UNION SELECT a.conv_key FROM approval_votes v JOIN approvals a ON a.id = v.approval_id WHERE v.person = $2
			UNION SELECT a.conv_key FROM approval_votes v JOIN approvals a ON a.id = v.approval_id WHERE v.actor_id = ANY($1)
			UNION SELECT conv_key FROM approvals
				WHERE CASE WHEN strpos(verdict, $3) = 0 THEN false ELSE (verdict::jsonb -> 'eligible') ? $2 END`,
			identities, person, string(quoted))
		if err != nil {
			return err
		}
		keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: participated: %w", err)
	}
	return keys, nil
}
