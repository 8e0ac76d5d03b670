package storetest

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/opsgate/opsgate/core"
)

const (
	conv1 = "slack:T1:C1:1700000000.000100"
	conv2 = "telegram:bot:42"
)

func inbound(conv, id string) core.Inbound {
	return core.Inbound{
		ConvKey:   conv,
		MessageID: id,
		User:      core.Actor{ID: "U1", Name: "alice"},
		Text:      "restart the payments deployment",
		Time:      t0,
	}
}

// saveInbound calls SaveInbound and fails the test on error.
func saveInbound(t *testing.T, s core.Store, in core.Inbound) bool {
	t.Helper()
	first, err := s.SaveInbound(t.Context(), in)
	if err != nil {
		t.Fatalf("SaveInbound(%q, %q): %v", in.ConvKey, in.MessageID, err)
	}
	return first
}

func testSaveInboundDedupe(t *testing.T, s core.Store) {
	if !saveInbound(t, s, inbound(conv1, "m1")) {
		t.Fatal("first SaveInbound of m1: first=false, want true")
	}
	for i := range 2 {
		// A redelivery may differ in everything but the id.
		in := inbound(conv1, "m1")
		in.Text = fmt.Sprintf("redelivery %d", i)
		if saveInbound(t, s, in) {
			t.Fatalf("SaveInbound of m1 again (%d): first=true, want false", i+1)
		}
	}
	if !saveInbound(t, s, inbound(conv1, "m2")) {
		t.Error("SaveInbound of another id m2: first=false, want true")
	}
}

func testSaveInboundEmptyMessageID(t *testing.T, s core.Store) {
	for i := range 3 {
		if !saveInbound(t, s, inbound(conv1, "")) {
			t.Fatalf("SaveInbound with empty MessageID (%d): first=false, want true", i+1)
		}
	}
}

func testSaveInboundPerConversation(t *testing.T, s core.Store) {
	if !saveInbound(t, s, inbound(conv1, "m1")) {
		t.Fatal("SaveInbound(conv1, m1): first=false, want true")
	}
	if !saveInbound(t, s, inbound(conv2, "m1")) {
		t.Error("SaveInbound(conv2, m1): first=false, want true: the same id in another conversation is another message")
	}
	if saveInbound(t, s, inbound(conv2, "m1")) {
		t.Error("SaveInbound(conv2, m1) again: first=true, want false")
	}
}

func testPendingInbound(t *testing.T, s core.Store) {
	ctx := t.Context()
	if got, err := s.PendingInbound(ctx); err != nil || len(got) != 0 {
		t.Fatalf("PendingInbound of an empty store = %v, %v", got, err)
	}
	m1, m2, m3 := inbound(conv1, "m1"), inbound(conv2, "m2"), inbound(conv1, "m3")
	for _, in := range []core.Inbound{m1, m2, m3} {
		saveInbound(t, s, in)
	}
	saveInbound(t, s, m1) // a redelivery adds nothing
	if err := s.Apply(ctx, core.Batch{InboundDone: []core.Inbound{{ConvKey: conv2, MessageID: "m2"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, core.Batch{InboundDone: []core.Inbound{{ConvKey: conv1, MessageID: "no-such-message"}}}); err != nil {
		t.Fatalf("MarkInboundDone of an unknown id: %v, want nil", err)
	}
	got, err := s.PendingInbound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]core.Inbound{m1, m3}, got, cmpopts.EquateApproxTime(Precision)); diff != "" {
		t.Errorf("PendingInbound (-want +got):\n%s", diff)
	}
	for _, in := range []core.Inbound{m1, m3} {
		if err := s.Apply(ctx, core.Batch{InboundDone: []core.Inbound{{ConvKey: in.ConvKey, MessageID: in.MessageID}}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.PendingInbound(ctx); err != nil || len(got) != 0 {
		t.Fatalf("PendingInbound after marking all done = %v, %v", got, err)
	}
	// A done message redelivered is still a duplicate.
	if saveInbound(t, s, m1) {
		t.Error("SaveInbound of a done message: first=true, want false")
	}
}

func testSaveInboundConcurrent(t *testing.T, s core.Store) {
	var firsts, errs atomic.Int64
	concurrently(racers, func(int) {
		first, err := s.SaveInbound(t.Context(), inbound(conv1, "dup"))
		if err != nil {
			t.Errorf("SaveInbound: %v", err)
			errs.Add(1)
			return
		}
		if first {
			firsts.Add(1)
		}
	})
	if errs.Load() == 0 && firsts.Load() != 1 {
		t.Errorf("%d concurrent SaveInbound of one message: %d reported first, want exactly 1", racers, firsts.Load())
	}
}

func testConversationCreatedOnFirstUse(t *testing.T, s core.Store) {
	c, err := s.Conversation(t.Context(), conv1)
	if err != nil {
		t.Fatalf("Conversation of a new key: %v", err)
	}
	if c.Key != conv1 || c.Title != "" || len(c.Toolsets) != 0 || c.CreatedAt.IsZero() {
		t.Fatalf("new Conversation = %+v, want key %q, no title, no toolsets, CreatedAt set", c, conv1)
	}
	again, err := s.Conversation(t.Context(), conv1)
	if err != nil {
		t.Fatalf("Conversation again: %v", err)
	}
	diff(t, "Conversation read twice", c, again)

	// Writing to a conversation nobody looked up creates it too.
	if err := s.Apply(t.Context(), core.Batch{ConvKey: conv2, Messages: []core.Message{{Role: core.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatalf("AppendMessages to a new conversation: %v", err)
	}
	c2, err := s.Conversation(t.Context(), conv2)
	if err != nil {
		t.Fatalf("Conversation after AppendMessages: %v", err)
	}
	if c2.Key != conv2 || c2.CreatedAt.IsZero() {
		t.Errorf("Conversation after AppendMessages = %+v, want key %q and CreatedAt set", c2, conv2)
	}
}

func testUpdateConversation(t *testing.T, s core.Store) {
	ctx := t.Context()
	c, err := s.Conversation(ctx, conv1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.Conversation(ctx, conv2)
	if err != nil {
		t.Fatal(err)
	}
	c.Title = "Payments 502s — rollback ✅"
	c.Toolsets = []core.Toolset{{Name: "k8s"}, {Name: "argo", Write: true}}
	if err := s.Apply(ctx, core.Batch{Conversation: ptr(c)}); err != nil {
		t.Fatalf("UpdateConversation: %v", err)
	}
	got, err := s.Conversation(ctx, conv1)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "Conversation after update", c, got)

	// A second update replaces the state, it does not merge it.
	c.Title = "renamed"
	c.Toolsets = []core.Toolset{{Name: "jenkins"}}
	if err := s.Apply(ctx, core.Batch{Conversation: ptr(c)}); err != nil {
		t.Fatalf("UpdateConversation again: %v", err)
	}
	if got, err = s.Conversation(ctx, conv1); err != nil {
		t.Fatal(err)
	}
	diff(t, "Conversation after second update", c, got)

	gotOther, err := s.Conversation(ctx, conv2)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "untouched conversation", other, gotOther)
}

// transcript is a turn with every field of Message in use, including tool
// calls whose arguments are oddly formatted, empty and malformed.
func transcript() []core.Message {
	return []core.Message{
		{Role: core.RoleSystem, Content: "You are opsgate.", Time: at(0)},
		{Role: core.RoleUser, Content: "why is payments\nreturning 502? «ünïcode» 🚨", Name: "alice", RunID: "run-1", Time: at(1)},
		{Role: core.RoleAssistant, RunID: "run-1", Time: at(2), ToolCalls: []core.ToolCall{
			{ID: "call_1", Name: "get_pods", Arguments: []byte(`{ "namespace" : "payments",  "labels":{"b":1,"a":2} }`)},
			{ID: "call_2", Name: "get_events", Arguments: nil},
			{ID: "call_3", Name: "scale", Arguments: []byte(`{"replicas": 3`)},
		}},
		{Role: core.RoleTool, ToolCallID: "call_1", Name: "get_pods", Content: strings.Repeat("pod-x Running\n", 20000), RunID: "run-1", Time: at(3)},
		{Role: core.RoleTool, ToolCallID: "call_2", Name: "get_events", Content: "", RunID: "run-1", Time: at(4)},
		{Role: core.RoleTool, ToolCallID: "call_3", Name: "scale", Content: "invalid arguments: unexpected end of JSON input", RunID: "run-1", Time: at(5)},
		{Role: core.RoleAssistant, Content: "The pods are **CrashLooping**.", RunID: "run-1", Time: at(6)},
		{Role: core.RoleUser, Content: "no time on this one"},
	}
}

// messages calls Messages and fails the test on error.
func messages(t *testing.T, s core.Store, conv string) []core.Message {
	t.Helper()
	msgs, err := s.Messages(t.Context(), conv)
	if err != nil {
		t.Fatalf("Messages(%q): %v", conv, err)
	}
	return msgs
}

func testMessagesRoundTrip(t *testing.T, s core.Store) {
	if got := messages(t, s, conv1); len(got) != 0 {
		t.Fatalf("Messages of a new conversation = %d messages, want none", len(got))
	}
	want := transcript()
	if err := s.Apply(t.Context(), core.Batch{ConvKey: conv1, Messages: want}); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	diff(t, "Messages", want, messages(t, s, conv1))
}

func testMessagesOrderAcrossAppends(t *testing.T, s core.Store) {
	want := transcript()
	for i, m := range want {
		if err := s.Apply(t.Context(), core.Batch{ConvKey: conv1, Messages: []core.Message{m}}); err != nil {
			t.Fatalf("AppendMessages #%d: %v", i, err)
		}
	}
	if err := s.Apply(t.Context(), core.Batch{ConvKey: conv1}); err != nil {
		t.Fatalf("AppendMessages with no messages: %v", err)
	}
	diff(t, "Messages appended one by one", want, messages(t, s, conv1))
}

func testMessagesPerConversation(t *testing.T, s core.Store) {
	ctx := t.Context()
	a := []core.Message{{Role: core.RoleUser, Content: "a1"}, {Role: core.RoleAssistant, Content: "a2"}}
	b := []core.Message{{Role: core.RoleUser, Content: "b1"}}
	if err := s.Apply(ctx, core.Batch{ConvKey: conv1, Messages: []core.Message{a[0]}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, core.Batch{ConvKey: conv2, Messages: b}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, core.Batch{ConvKey: conv1, Messages: []core.Message{a[1]}}); err != nil {
		t.Fatal(err)
	}
	diff(t, "Messages(conv1)", a, messages(t, s, conv1))
	diff(t, "Messages(conv2)", b, messages(t, s, conv2))
}

// testMessagesConcurrentAppends checks that one AppendMessages call lands as
// one contiguous block, in order, whatever else is appended at the time.
func testMessagesConcurrentAppends(t *testing.T, s core.Store) {
	const batch = 3
	concurrently(racers, func(i int) {
		var msgs []core.Message
		for j := range batch {
			msgs = append(msgs, core.Message{Role: core.RoleUser, Content: fmt.Sprintf("%d/%d", i, j)})
		}
		if err := s.Apply(t.Context(), core.Batch{ConvKey: conv1, Messages: msgs}); err != nil {
			t.Errorf("AppendMessages: %v", err)
		}
	})
	got := messages(t, s, conv1)
	if len(got) != racers*batch {
		t.Fatalf("Messages after %d concurrent appends of %d = %d messages, want %d", racers, batch, len(got), racers*batch)
	}
	seen := map[int]bool{}
	for k := 0; k < len(got); k += batch {
		var i, j int
		if _, err := fmt.Sscanf(got[k].Content, "%d/%d", &i, &j); err != nil || j != 0 || seen[i] {
			t.Fatalf("message %d = %q, want the start of an unseen batch", k, got[k].Content)
		}
		seen[i] = true
		for j := 1; j < batch; j++ {
			if want := fmt.Sprintf("%d/%d", i, j); got[k+j].Content != want {
				t.Fatalf("message %d = %q, want %q: a batch was split or reordered", k+j, got[k+j].Content, want)
			}
		}
	}
}
