package terminal_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
)

// Commands are handled by the adapter in the line protocol too, and
// nothing that looks like a command reaches the model.
func TestCommandsNeverReachTheModel(t *testing.T) {
	e := approvalScript()
	e.onStatus = func(key string) core.Status {
		return core.Status{
			ActiveRun:        &core.Run{StartedAt: time.Now(), Iterations: 2},
			Queued:           1,
			PendingApprovals: []core.Approval{*approval("a9", "scale_deployment", core.RiskWrite, `{"name":"web","replicas":3}`)},
		}
	}
	in := strings.Join([]string{
		"/help", "/status", "/xyz", "/Nope now", "/new please", "hello", "/STOP", "/etc/hosts is full", "/quit", "never sent",
	}, "\n")
	a, out := newAdapter(t, strings.NewReader(in), false, e)
	if err := a.Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]string{"hello", "/etc/hosts is full"}, handled(e)); diff != "" {
		t.Errorf("messages sent to the model (-want +got):\n%s", diff)
	}
	mustInOrder(t, out.String(),
		"commands:\n  /new     start a fresh conversation",
		"  /status  ", "  /stop    ", "  /help    ", "  /quit    ",
		"conversation test\n▶ a run is active since ",
		" (2 model call(s) so far)\n1 message(s) queued\n⏸ scale_deployment name=web replicas=3 waits for approval, expires in ",
		"unknown command /xyz, /help lists them\n",
		"unknown command /nope, /help lists them\n",
		"/new takes no arguments\n",
		"echo: hello\n",
	)
	if e.stops != 2 { // /STOP and /quit
		t.Errorf("stops = %d, want 2", e.stops)
	}
}

// /new moves to a fresh conversation of the same user; the old one is
// stopped, and /status and /stop act on the new one.
func TestNewStartsAFreshConversation(t *testing.T) {
	e := approvalScript()
	var statusOf []string
	e.onStatus = func(key string) core.Status { statusOf = append(statusOf, key); return core.Status{} }
	a, out := newAdapter(t, strings.NewReader("one\n/new\ntwo\n/status\n"), false, e)
	if err := a.Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.mu.Lock()
	convs := e.convs
	e.mu.Unlock()
	fresh := a.ConvKey()
	if len(convs) != 2 || convs[0] != conv || convs[1] != fresh || fresh == conv {
		t.Fatalf("conversations of the messages = %q, now in %q; want %q, then a fresh one", convs, fresh, conv)
	}
	if !strings.HasPrefix(fresh, terminal.ConvPrefix("alice")) || terminal.CheckConvName(terminal.ConvID(fresh)) != nil {
		t.Errorf("fresh conversation %q is not one of alice's terminal conversations", fresh)
	}
	if diff := cmp.Diff([]string{fresh}, statusOf); diff != "" {
		t.Errorf("/status asked about (-want +got):\n%s", diff)
	}
	if e.stops != 1 {
		t.Errorf("stops = %d, want 1: /new stops the old conversation", e.stops)
	}
	mustInOrder(t, out.String(), "echo: one\n", "🆕 new conversation "+terminal.ConvID(fresh)+" (what ran in the previous one was stopped)\n", "echo: two\n", "conversation "+terminal.ConvID(fresh)+"\nnothing is running\n")
}

// A command while an approval waits is a command, not an answer.
func TestCommandWhileApprovalPendingIsNoAnswer(t *testing.T) {
	e := approvalScript()
	a, out := newAdapter(t, strings.NewReader("scale\n/help\n/bogus\ny\ny\n"), false, e)
	if err := a.Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(e.decisions) != 2 || !e.decisions[0].Approve || !e.decisions[1].Approve {
		t.Errorf("decisions = %+v, want two approvals from the two y lines", e.decisions)
	}
	mustContain(t, out.String(), "unknown command /bogus, /help lists them\n", "commands:\n")
}

func TestLineTooLongIsRejectedAndTheSessionGoesOn(t *testing.T) {
	e := approvalScript()
	in := "first\n" + strings.Repeat("x", terminal.MaxLineBytes+1) + "\nsecond\n"
	a, out := newAdapter(t, strings.NewReader(in), false, e)
	err := a.Run(context.Background(), e)
	if err == nil || !strings.Contains(err.Error(), "1 line(s) longer than 1 MiB were discarded") {
		t.Errorf("Run = %v, want ErrLineTooLong naming the limit", err)
	}
	if diff := cmp.Diff([]string{"first", "second"}, handled(e)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	mustInOrder(t, out.String(), "echo: first\n", "error: the line is longer than 1 MiB; it was discarded\n", "echo: second\n")
}

func TestParseConversationNames(t *testing.T) {
	for _, ok := range []string{"incident-42", "a", "v1.2_b", strings.Repeat("n", terminal.MaxConvName), terminal.NewConvID(time.Now())} {
		if err := terminal.CheckConvName(ok); err != nil {
			t.Errorf("CheckConvName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a:b", "../x", "ü", "x/y", strings.Repeat("n", terminal.MaxConvName+1)} {
		if err := terminal.CheckConvName(bad); err == nil {
			t.Errorf("CheckConvName(%q) = nil, want an error", bad)
		}
	}
	// A user name cannot reach into another user's keys.
	if p := terminal.ConvPrefix("a:b"); p != "terminal:a%3Ab:" || strings.HasPrefix(p, terminal.ConvPrefix("a")) {
		t.Errorf("ConvPrefix(a:b) = %q", p)
	}
	if k := terminal.ConvKey("alice@corp", "x"); k != "terminal:alice@corp:x" || terminal.ConvID(k) != "x" {
		t.Errorf("ConvKey = %q", k)
	}
}

func mustContain(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
}

func mustInOrder(t *testing.T, s string, wants ...string) {
	t.Helper()
	coretest.MustInOrder(t, s, wants...)
}

// An approval request of the conversation left by /new is not asked in
// the new one: a y typed now must not approve it.
func TestApprovalOfThePreviousConversationIsNotAsked(t *testing.T) {
	e := &scriptEngine{}
	a, out := newAdapter(t, strings.NewReader("/new\n"), false, e)
	ap := approval("old", "scale_deployment", core.RiskWrite, `{"replicas":3}`)
	ap.ConvKey = conv
	if err := a.Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []core.Event{
		{Type: core.EventToolAwaitingApproval, ConvKey: conv, Approval: ap},
		{Type: core.EventCompleted, ConvKey: conv, Status: core.RunAwaitingApproval},
	} {
		if err := a.Send(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(out.String(), "approve scale_deployment") {
		t.Errorf("the previous conversation's request was asked:\n%s", out.String())
	}
	mustContain(t, out.String(), "(the previous conversation asks to run scale_deployment; not asked here, it will expire)\n")
}

// A read error ends the session after what was read, and is reported.
func TestReadErrorIsReported(t *testing.T) {
	boom := errors.New("boom")
	e := approvalScript()
	a, out := newAdapter(t, io.MultiReader(strings.NewReader("hello\n"), iotest.ErrReader(boom)), false, e)
	if err := a.Run(context.Background(), e); !errors.Is(err, boom) {
		t.Errorf("Run = %v, want the read error", err)
	}
	mustContain(t, out.String(), "echo: hello\n")
}
