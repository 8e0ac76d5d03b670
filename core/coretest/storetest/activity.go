package storetest

import (
	"fmt"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// conversations calls Conversations and fails the test on error.
func conversations(t *testing.T, s core.Store, f core.ConversationFilter) []core.Conversation {
	t.Helper()
	cs, err := s.Conversations(t.Context(), f)
	if err != nil {
		t.Fatalf("Conversations(%+v): %v", f, err)
	}
	return cs
}

// keys returns the keys of cs, checking on the way that each conversation
// is more recent than the next.
func keys(t *testing.T, cs []core.Conversation) []string {
	t.Helper()
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Key
		if c.UpdatedAt.Before(c.CreatedAt) {
			t.Errorf("%s: UpdatedAt %v is before CreatedAt %v", c.Key, c.UpdatedAt, c.CreatedAt)
		}
		if i > 0 && !c.UpdatedAt.Before(cs[i-1].UpdatedAt) {
			t.Errorf("%s (UpdatedAt %v) is listed after %s (UpdatedAt %v): want strictly older",
				c.Key, c.UpdatedAt, cs[i-1].Key, cs[i-1].UpdatedAt)
		}
	}
	return out
}

// testConversationsByActivity checks what counts as activity (creation, a
// new inbound message, appended messages, alone or in a batch), what does
// not (a redelivery, UpdateConversation, reading), and the filter.
func testConversationsByActivity(t *testing.T, s core.Store) {
	ctx := t.Context()
	if cs := conversations(t, s, core.ConversationFilter{}); len(cs) != 0 {
		t.Fatalf("Conversations of an empty store = %+v, want none", cs)
	}
	const (
		a = "terminal:alice:20250314-092653-aaaaaa"
		b = "terminal:alice:incident.42"
		c = "terminal:bob:20250314-092653-cccccc"
		d = "slack:T1:C1:1700000000.000100"
	)
	saveInbound(t, s, inbound(a, "m1"))
	if err := s.Apply(ctx, core.Batch{ConvKey: b, Messages: []core.Message{{Role: core.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conversation(ctx, c); err != nil { // created by being read
		t.Fatal(err)
	}
	if err := s.Apply(ctx, core.Batch{Conversation: ptr(core.Conversation{Key: d, Title: "created by an update", CreatedAt: at(0)})}); err != nil {
		t.Fatal(err)
	}
	diff(t, "Conversations by creation", []string{d, c, b, a}, keys(t, conversations(t, s, core.ConversationFilter{})))

	saveInbound(t, s, inbound(a, "m2"))
	diff(t, "Conversations after a message in "+a, []string{a, d, c, b}, keys(t, conversations(t, s, core.ConversationFilter{})))

	saveInbound(t, s, inbound(b, "m1"))
	saveInbound(t, s, inbound(c, "m1"))
	// None of what follows is activity.
	cb, err := s.Conversation(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	saveInbound(t, s, inbound(c, "m1")) // a redelivery
	cb.Title = "renamed"
	if err := s.Apply(ctx, core.Batch{Conversation: ptr(cb)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conversation(ctx, a); err != nil {
		t.Fatal(err)
	}
	all := conversations(t, s, core.ConversationFilter{})
	diff(t, "Conversations after non-activity", []string{c, b, a, d}, keys(t, all))
	for _, got := range all {
		want, err := s.Conversation(ctx, got.Key)
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "Conversations entry vs Conversation("+got.Key+")", want, got)
	}

	// Messages appended by a batch are activity too.
	if err := s.Apply(ctx, core.Batch{ConvKey: b, Messages: []core.Message{{Role: core.RoleAssistant, Content: "hello"}}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		f    core.ConversationFilter
		want []string
	}{
		{core.ConversationFilter{}, []string{b, c, a, d}},
		{core.ConversationFilter{Limit: 2}, []string{b, c}},
		{core.ConversationFilter{KeyPrefix: "terminal:alice:"}, []string{b, a}},
		{core.ConversationFilter{KeyPrefix: "terminal:alice:", Limit: 1}, []string{b}},
		{core.ConversationFilter{KeyPrefix: "terminal:"}, []string{b, c, a}},
		{core.ConversationFilter{KeyPrefix: d}, []string{d}},
		{core.ConversationFilter{KeyPrefix: "TERMINAL:"}, nil}, // bytes, not case-folded
		{core.ConversationFilter{KeyPrefix: "terminal:carol:"}, nil},
	} {
		diff(t, fmt.Sprintf("Conversations(%+v)", tt.f), tt.want, keys(t, conversations(t, s, tt.f)))
	}
}

// testConversationsPrefixIsLiteral: a prefix is compared as text, not as
// a pattern, and counts characters, not bytes, correctly.
func testConversationsPrefixIsLiteral(t *testing.T, s core.Store) {
	for _, k := range []string{"api:x_y", "api:xay", "api:x%z", "api:x\\y", "api:ü1", "api:üb", "api:u1"} {
		saveInbound(t, s, inbound(k, "m1"))
	}
	for prefix, want := range map[string][]string{
		"api:x_":  {"api:x_y"},
		"api:x%":  {"api:x%z"},
		"api:x\\": {"api:x\\y"},
		"api:ü":   {"api:üb", "api:ü1"},
		"api:ü1":  {"api:ü1"},
	} {
		diff(t, "Conversations with prefix "+prefix, want, keys(t, conversations(t, s, core.ConversationFilter{KeyPrefix: prefix})))
	}
}

// testConversationsConcurrentActivity: activities racing in different
// conversations still get distinct, ordered times.
func testConversationsConcurrentActivity(t *testing.T, s core.Store) {
	concurrently(racers, func(i int) {
		if _, err := s.SaveInbound(t.Context(), inbound(fmt.Sprintf("api:race-%02d", i), "m1")); err != nil {
			t.Errorf("SaveInbound: %v", err)
		}
	})
	if got := keys(t, conversations(t, s, core.ConversationFilter{KeyPrefix: "api:race-"})); len(got) != racers {
		t.Errorf("Conversations after %d concurrent first messages = %d, want %d", racers, len(got), racers)
	}
}
