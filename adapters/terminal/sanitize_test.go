package terminal_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
)

func TestSanitize(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"plain text is kept", "hello\tworld\n«ünïcode» 🚨 — ok", "hello\tworld\n«ünïcode» 🚨 — ok"},
		{"OSC ended by BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"OSC ended by ESC \\", "a\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\b", "alinkb"},
		{"OSC cut off at the end", "a\x1b]0;pwn", "a"},
		{"CSI", "\x1b[2Jclear\x1b[31mred\x1b[0m \x1b[1A\x1b[2K", "clearred "},
		{"CSI private mode", "\x1b[?1049hx\x1b[?25l", "x"},
		{"DCS and APC strings", "a\x1bPq#0;2;0;0;0\x1b\\b\x1b_app\x07c", "abc"},
		{"two- and three-byte escapes", "\x1bcx\x1b(By\x1b7z\x1b8", "xyz"},
		{"ESC at the end", "x\x1b", "x"},
		{"ESC before a letter of another script", "x\x1bü", "xü"},
		{"8-bit CSI, OSC and other C1", "a\u009b2Jb\u009d0;t\u009cc\u0085d\u0080e", "abcde"},
		{"C0 controls and DEL", "a\rb\x00c\x07d\x08e\x7ff\x0cg", "abcdefg"},
		{"CRLF keeps the line break", "a\r\nb", "a\nb"},
		{"bidi overrides and isolates", "rm \u202efdp.exe\u202c \u2066x\u2069 \u202a\u202b\u202d\u2067\u2068", "rm fdp.exe x "},
		{"invalid UTF-8 (a raw 8-bit CSI)", "a\x9b2Jb\xff", "a\uFFFD2Jb\uFFFD"},
		{"a literal replacement character", "a\uFFFDb", "a\uFFFDb"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := terminal.Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzSanitize checks the promise, whatever the input: nothing a terminal
// acts on comes out, and printable text goes through.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b]0;pwned\x07", "\x1b[2J", "\u009b31m", "\u202e", "\xff\x9b", "ok\n", "\x1b\x1b[[", "\x1b]\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := terminal.Sanitize(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Sanitize(%q) = %q: not valid UTF-8", s, got)
		}
		for _, r := range got {
			if r < 0x20 && r != '\n' && r != '\t' || 0x7f <= r && r <= 0x9f ||
				0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069 {
				t.Fatalf("Sanitize(%q) = %q: keeps %U", s, got, r)
			}
		}
		if terminal.Sanitize(got) != got {
			t.Fatalf("Sanitize is not idempotent on %q", s)
		}
		if !strings.ContainsAny(s, "\x1b\u009b\u009d\u0090\u0098\u009e\u009f") && utf8.ValidString(s) {
			// Without escape introducers, only single characters are dropped.
			for _, r := range s {
				keep := r >= 0x20 && r != 0x7f && !(0x80 <= r && r <= 0x9f) &&
					!(0x202a <= r && r <= 0x202e) && !(0x2066 <= r && r <= 0x2069) || r == '\n' || r == '\t'
				if keep && !strings.ContainsRune(got, r) {
					t.Fatalf("Sanitize(%q) = %q: lost %U", s, got, r)
				}
			}
		}
	})
}

// Every field of every event the terminal shows goes through Sanitize:
// a poisoned value anywhere leaves no control character in the output.
func TestRenderNeutralisesEveryField(t *testing.T) {
	const p = "\x1b]0;pwned\x07\x1b[2J\u009b1m\u202e\r\x08"
	args := json.RawMessage(`{"k` + "\u202e" + `":"v\u001b[2J\u0007` + "\u2066" + `","n":{"x":"\u001b]0;t\u0007"}}`)
	poisoned := func(id string) *core.Approval {
		return &core.Approval{ID: id, Tool: "tool" + p, Toolset: "set" + p, Arguments: args, Risk: core.Risk("risk" + p),
			Requester: core.Actor{ID: "u", Name: "req" + p}, DecidedBy: core.Actor{ID: "d", Name: "dec" + p}, Reason: "why" + p,
			Status: core.ApprovalDenied, ExpiresAt: time.Now().Add(time.Hour)}
	}
	c := &core.CallInfo{ID: "c1", Name: "call" + p, Arguments: args, Result: "result" + p, IsError: true}
	events := []core.Event{
		{Type: core.EventGenerationStart},
		{Type: core.EventToken, Text: "token" + p},
		{Type: core.EventGenerationComplete, Text: "token" + p},
		{Type: core.EventGenerationStart},
		{Type: core.EventGenerationComplete, Text: "whole" + p},
		{Type: core.EventToolExecuting, Call: c},
		{Type: core.EventToolResult, Call: c},
		{Type: core.EventToolError, Call: &core.CallInfo{ID: "c2", Name: "call" + p}, Error: "error" + p},
		{Type: core.EventTransientError, Error: "transient" + p},
		{Type: core.EventToolAwaitingApproval, Approval: poisoned("a1")},
		{Type: core.EventToolAwaitingApproval, Approval: poisoned("a2")},
		{Type: core.EventCompleted, Status: core.RunAwaitingApproval},
		{Type: core.EventToolApproved, Approval: poisoned("a1")},
		{Type: core.EventToolDenied, Approval: poisoned("a2")},
		{Type: core.EventWorkflowError, Text: "workflow" + p},
		{Type: core.EventCompleted, Status: core.RunError, Error: "run" + p},
		{Type: core.EventCompleted, Status: core.RunError, Text: "run" + p},
	}
	e := &scriptEngine{onStatus: func(string) core.Status {
		return core.Status{PendingApprovals: []core.Approval{*poisoned("a3")}}
	}}
	for _, color := range []bool{false, true} {
		a, out := newAdapterWith(t, strings.NewReader(""), terminal.Options{Interactive: color, Color: color}, e)
		for _, ev := range events {
			if err := a.Send(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
		}
		got := out.String()
		for _, seq := range ownSequences {
			got = strings.ReplaceAll(got, seq, "")
		}
		if i := strings.IndexAny(got, "\x1b\x07\x08\r\u009b\u202e\u2066"); i >= 0 {
			t.Errorf("color=%v: output keeps a control character at %d:\n%q", color, i, got)
		}
		for _, w := range []string{"token", "whole", "call", "result", "error", "transient", "tool", "set", "risk", "req", "dec", "why", "workflow", "run"} {
			if !strings.Contains(got, w) {
				t.Errorf("color=%v: output lacks %q", color, w)
			}
		}
	}
	a, out := newAdapter(t, strings.NewReader("/status\n"), false, e)
	if err := a.Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); strings.ContainsAny(got, "\x1b\x07\x08\r\u009b\u202e\u2066") || !strings.Contains(got, "tool") {
		t.Errorf("/status output keeps a control character:\n%q", got)
	}
}
