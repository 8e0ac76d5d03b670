package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// A new conversation's first message writes the conversation once: the
// row it creates already carries the message's activity (issue 25: it
// was created and then touched again, on every new chat's message). A
// later message in it touches it, as before.
func TestFirstMessageOfAConversationWritesItOnce(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	changes := func() int {
		var n int
		if err := s.w.db.QueryRowContext(t.Context(), `SELECT total_changes()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	save := func(id string) int {
		before := changes()
		in := core.Inbound{ConvKey: "telegram:42", MessageID: id, User: core.Actor{ID: "42"}, Text: "hi", Time: time.Now()}
		if first, err := s.SaveInbound(t.Context(), in); err != nil || !first {
			t.Fatalf("SaveInbound %s: first %v, %v", id, first, err)
		}
		return changes() - before
	}
	if n := save("1"); n != 2 {
		t.Errorf("the first message changed %d rows; want 2 (the conversation and the message)", n)
	}
	if n := save("2"); n != 2 {
		t.Errorf("a later message changed %d rows; want 2 (the message and the conversation's activity)", n)
	}
}
