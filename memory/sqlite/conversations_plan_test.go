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
	rows, err := s.r.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+conversationsPrefixed, 3, "tg:", "tg:"+prefixEnd, -1)
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
	got := strings.Join(plan, "; ")
	if !strings.Contains(got, "SEARCH conversations USING INDEX") || !strings.Contains(got, "key>? AND key<?") {
		t.Fatalf("query plan %q: want a search of the key's index", got)
	}
}
