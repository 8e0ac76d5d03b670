package terminal_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// The tests here run the adapter on the real engine: openai-go against
// llmfake, the k8s MCP fixture, SQLite.

type engineRig struct {
	a     *terminal.Adapter
	out   *coretest.SyncBuffer
	stack *enginetest.Stack
	eng   *core.Engine
}

// newEngineRig wires an adapter reading in, with opts, to a real engine.
func newEngineRig(t *testing.T, in io.Reader, opts terminal.Options) *engineRig {
	t.Helper()
	r := &engineRig{out: &coretest.SyncBuffer{}, stack: enginetest.New(t)}
	opts.In, opts.Out, opts.User, opts.ConvKey = in, r.out, alice, conv
	r.a = terminal.New(opts)
	r.eng = enginetest.Engine(t, enginetest.Config(), r.stack.Deps(t, r.a))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.eng.Shutdown(ctx)
	})
	return r
}

// waitOutput waits until the output contains s.
func (r *engineRig) waitOutput(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(r.out.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("output never showed %q:\n%q", s, r.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func toolCalls(calls ...llmfake.ToolCall) llmfake.Reply { return llmfake.Reply{ToolCalls: calls} }

func tc(id, name, args string) llmfake.ToolCall {
	return llmfake.ToolCall{ID: id, Name: name, Arguments: args}
}

var loadWrites = toolCalls(tc("load", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`))

// ownSequences are the escape sequences opsgate itself writes with Color.
var ownSequences = []string{"\x1b[1A\r\x1b[2K", "\x1b[0m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[2m", "\x1b[1m"}

// Issue 9 acceptance 8: terminal output of model text containing
// `\x1b]0;pwned\x07` and `\x1b[2J` shows no raw escape bytes: none at all
// without Color, only opsgate's own SGR (and status-line redraw) sequences
// with it. Tool arguments, the approval card and question, and the user's
// reason for a denial carry escapes too.
func TestTerminalShowsNoRawEscapeSequences(t *testing.T) {
	for _, color := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "color"}[color], func(t *testing.T) {
			in, w := io.Pipe()
			defer w.Close()
			r := newEngineRig(t, in, terminal.Options{Interactive: color, Color: color})
			r.stack.LLM.Push(
				toolCalls(tc("c1", "get_pods", `{"namespace":"prod\u001b]0;pwned\u0007\u001b[2J"}`), loadWrites.ToolCalls[0]),
				toolCalls(tc("c2", "scale_deployment", `{"name":"web\u001b[2J\u202e\u009b2J","replicas":3}`)),
				llmfake.Reply{Text: "Not scaled.\x1b]0;pwned\x07 Title \x1b[2Jcleared \u009b31m C1 \u202eevil \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ done"},
			)
			done := make(chan error, 1)
			go func() { done <- r.a.Run(context.Background(), r.eng) }()
			if _, err := io.WriteString(w, "check prod \x1b[2J please\n"); err != nil {
				t.Fatal(err)
			}
			r.waitOutput(t, "[y/N]")
			if _, err := io.WriteString(w, "no \x1b]0;pwned\x07 way\n"); err != nil {
				t.Fatal(err)
			}
			r.waitOutput(t, " done")
			w.Close()
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := r.out.String()
			mustInOrder(t, got, "⏳ get_pods namespace=prod", "get_pods", "scale_deployment", "denied by alice: no way",
				"Not scaled. Title cleared  C1 evil link done")
			rest := got
			if color {
				if !strings.Contains(got, "\x1b[32m") {
					t.Errorf("with Color, no color at all:\n%q", got)
				}
				for _, seq := range ownSequences {
					rest = strings.ReplaceAll(rest, seq, "")
				}
			}
			if i := strings.IndexAny(rest, "\x1b\x07\u009b\u009c\u009d\u202e"); i >= 0 {
				t.Errorf("output has a raw escape or control at %d (…%q…):\n%q", i, rest[max(0, i-20):min(len(rest), i+20)], got)
			}
		})
	}
}

// Issue 9 acceptance 9: two writes of one tool in one batch produce two
// distinguishable prompts.
func TestTerminalTwoWritesOfOneToolAskDistinguishably(t *testing.T) {
	r := newEngineRig(t, strings.NewReader("scale web and api\ny\nn\n"), terminal.Options{})
	r.stack.LLM.Push(
		loadWrites,
		toolCalls(
			tc("w1", "scale_deployment", `{"name":"web","replicas":5}`),
			tc("w2", "scale_deployment", `{"name":"api","replicas":2}`),
		),
		llmfake.Reply{Text: "Scaled web; api was not scaled."},
	)
	if err := r.a.Run(context.Background(), r.eng); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var prompts []string
	for _, l := range strings.Split(r.out.String(), "\n") {
		if strings.HasPrefix(l, "approve ") {
			prompts = append(prompts, l)
		}
	}
	want := []string{
		"approve scale_deployment 1/2 (name=web replicas=5)? [y/N]",
		"approve scale_deployment 2/2 (name=api replicas=2)? [y/N]",
	}
	if diff := cmp.Diff(want, prompts); diff != "" {
		t.Errorf("approval prompts (-want +got):\n%s\noutput:\n%s", diff, r.out.String())
	}
	calls := r.stack.K8s.Calls()
	if len(calls) != 1 || calls[0].Args["name"] != "web" {
		t.Errorf("MCP calls = %+v, want only the approved web scale", calls)
	}
}

// An approval nobody answered before input ended is denied by the system,
// and audited so: no person's name is on it (issue 9, item 6).
func TestTerminalEndOfInputDenialIsAuditedAsTheSystem(t *testing.T) {
	r := newEngineRig(t, strings.NewReader("delete dev\n"), terminal.Options{})
	r.stack.LLM.Push(
		loadWrites,
		toolCalls(tc("d1", "delete_namespace", `{"namespace":"dev"}`)),
		llmfake.Reply{Text: "Not deleted: nobody approved."},
	)
	err := r.a.Run(context.Background(), r.eng)
	if !errors.Is(err, terminal.ErrUnanswered) {
		t.Fatalf("Run = %v, want ErrUnanswered", err)
	}
	mustInOrder(t, r.out.String(),
		"approve DESTRUCTIVE delete_namespace (namespace=dev)? [y/N]\n",
		"no answer for delete_namespace: input ended, denying\n",
		"✖ delete_namespace denied by opsgate: no answer: input ended\n",
		"Not deleted: nobody approved.\n")
	entries, err := r.stack.Store.Audit(context.Background(), core.AuditFilter{ConvKey: conv})
	if err != nil {
		t.Fatal(err)
	}
	var decisions []core.AuditEntry
	for _, e := range entries {
		if e.ApprovalID != "" && e.Kind != core.AuditProposed {
			decisions = append(decisions, e)
		}
	}
	if len(decisions) != 1 || decisions[0].Kind != core.AuditDenied || decisions[0].Actor != core.SystemActor || decisions[0].Detail != terminal.NoAnswerReason {
		t.Errorf("decisions in the audit log = %+v, want one denial by %v with detail %q", decisions, core.SystemActor, terminal.NoAnswerReason)
	}
	if calls := r.stack.K8s.Calls(); len(calls) != 0 {
		t.Errorf("MCP calls = %+v, want none", calls)
	}
}
