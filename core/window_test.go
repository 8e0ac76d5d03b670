package core_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opsgate/opsgate/core"
)

func TestWindowKeepsSystemFirstUserAndNewestWithoutOrphans(t *testing.T) {
	call := func(id string) core.ToolCall { return core.ToolCall{ID: id, Name: "get_pods", Arguments: []byte(`{}`)} }
	msgs := []core.Message{
		{Role: core.RoleSystem, Content: "sys"},
		{Role: core.RoleUser, Content: "first"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{call("a")}},
		{Role: core.RoleTool, ToolCallID: "a", Content: "ra"},
		{Role: core.RoleAssistant, Content: "answer 1"},
		{Role: core.RoleUser, Content: "second"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{call("b"), call("c")}},
		{Role: core.RoleTool, ToolCallID: "b", Content: "rb"},
		{Role: core.RoleTool, ToolCallID: "c", Content: "rc"},
		{Role: core.RoleUser, Content: "newest"},
	}
	tests := []struct {
		name string
		keep int
		want []string // role:content (or role:calls) of the kept messages
	}{
		{"everything fits", 40, []string{"system:sys", "user:first", "assistant:[a]", "tool:ra", "assistant:answer 1", "user:second", "assistant:[b c]", "tool:rb", "tool:rc", "user:newest"}},
		{"cut inside a tool group keeps the group whole", 3, []string{"system:sys", "user:first", "assistant:[b c]", "tool:rb", "tool:rc", "user:newest"}},
		// A window of 7 starts at "tool:ra"; it is extended back to its call.
		{"a window starting at a result takes its call along", 7, []string{"system:sys", "user:first", "assistant:[a]", "tool:ra", "assistant:answer 1", "user:second", "assistant:[b c]", "tool:rb", "tool:rc", "user:newest"}},
		{"only the newest", 1, []string{"system:sys", "user:first", "user:newest"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describe(core.Window(msgs, tt.keep))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Window(%d) mismatch (-want +got):\n%s", tt.keep, diff)
			}
		})
	}
}

func TestWindowDropsOrphansOfABrokenTranscript(t *testing.T) {
	msgs := []core.Message{
		{Role: core.RoleUser, Content: "first"},
		{Role: core.RoleTool, ToolCallID: "ghost", Content: "orphan result"},
		{Role: core.RoleAssistant, Content: "thinking", ToolCalls: []core.ToolCall{{ID: "x", Name: "get_pods"}, {ID: "y", Name: "get_logs"}}},
		{Role: core.RoleTool, ToolCallID: "x", Content: "rx"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "z", Name: "get_pods"}}},
		{Role: core.RoleUser, Content: "newest"},
	}
	got := describe(core.Window(msgs, 40))
	want := []string{"user:first", "assistant:thinking[x]", "tool:rx", "user:newest"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func describe(msgs []core.Message) []string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role) + ":" + m.Content
		if len(m.ToolCalls) > 0 {
			s += "["
			for i, c := range m.ToolCalls {
				if i > 0 {
					s += " "
				}
				s += c.ID
			}
			s += "]"
		}
		out = append(out, s)
	}
	return out
}

func TestWindowPutsResultsBehindTheirCall(t *testing.T) {
	msgs := []core.Message{
		{Role: core.RoleUser, Content: "first"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "a", Name: "scale"}}},
		{Role: core.RoleUser, Content: "never mind"},
		{Role: core.RoleTool, ToolCallID: "a", Content: "ra (a decision that raced the new message)"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "a", Name: "get_pods"}}},
		{Role: core.RoleTool, ToolCallID: "a", Content: "second a"},
		{Role: core.RoleUser, Content: "newest"},
	}
	got := describe(core.Window(msgs, 40))
	want := []string{"user:first", "assistant:[a]", "tool:ra (a decision that raced the new message)", "user:never mind", "assistant:[a]", "tool:second a", "user:newest"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
