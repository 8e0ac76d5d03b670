package render_test

import (
	"testing"

	"github.com/opsgate/opsgate/adapters/render"
)

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"**bold** and *it* and _it_", "bold and it and it"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"unbalanced **bold", "unbalanced **bold"},
		{"a * b * c", "a * b * c"},
		{"`code **not bold**`", "code **not bold**"},
		{"[docs](https://example.com/x) and [bad](javascript:alert(1))", "docs and [bad](javascript:alert(1))"},
		{"# Title\n- item\n* item2", "Title\n• item\n• item2"},
		{"```go\nx := 1\n```\nafter", "x := 1\nafter"},
		{"```\nunclosed\nfence", "unclosed\nfence"},
		{"~~gone~~ \\*literal\\*", "gone *literal*"},
		{"x < y && y > z", "x < y && y > z"},
	}
	for _, tt := range tests {
		if got := render.PlainText(tt.in); got != tt.want {
			t.Errorf("PlainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestButtonData(t *testing.T) {
	id := "0123456789abcdef0123456789abcdef"
	d := render.ButtonData(render.ActionApprove, id, 64)
	act, got, ok := render.ParseButtonData(d)
	if !ok || act != render.ActionApprove || got != id || len(d) > 64 {
		t.Errorf("ButtonData round trip: %q -> %q %q %v", d, act, got, ok)
	}
	long := render.ButtonData(render.ActionStop, string(make([]byte, 100)), 64)
	if len(long) != 64 {
		t.Errorf("long data is %d bytes, want 64", len(long))
	}
	for _, bad := range []string{"", "a:", "x:1", "nocolon"} {
		if _, _, ok := render.ParseButtonData(bad); ok {
			t.Errorf("ParseButtonData(%q) accepted", bad)
		}
	}
}
