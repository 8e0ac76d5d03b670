package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A chat adapter lists a chat's conversations by key prefix at the chat's
// first message, before the message is stored: the listing seeks the
// primary key's index rather than reading every conversation (issue 25).
func TestConversationsByPrefixSeekTheKeyIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := queryPlan(t, s, conversationsPrefixed, 3, "tg:", "tg:"+prefixEnd, -1)
	if !strings.Contains(got, "SEARCH conversations USING INDEX") || !strings.Contains(got, "key>? AND key<?") {
		t.Fatalf("query plan %q: want a search of the key's index", got)
	}
}

// Every new message reads its conversation's checkpoints (to close a paused
// run it supersedes): the read seeks the conversation's index rather than
// reading every checkpoint of every conversation (issue 25).
func TestCheckpointsOfAConversationSeekItsIndex(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := queryPlan(t, s, checkpointsOfConv, "tg:1")
	if !strings.Contains(got, "SEARCH checkpoints USING INDEX checkpoints_conv (conv_key=?)") {
		t.Fatalf("query plan %q: want a search of checkpoints_conv", got)
	}
}

// queryPlan is SQLite's EXPLAIN QUERY PLAN of query, its lines joined.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.r.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}
