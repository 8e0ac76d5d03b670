package terminal_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
)

var alice = core.Actor{ID: "alice", Name: "alice"}

var conv = terminal.ConvKey("alice", "test")

// scriptEngine is a hand-written engine: Handle and Decide record what they
// got and deliver scripted events to the adapter from another goroutine,
// as core.Engine does; Wait waits for those deliveries.
type scriptEngine struct {
	t        *testing.T
	sender   core.EventSender
	onHandle func(in core.Inbound) []core.Event
	onDecide func(d core.Decision) []core.Event
	onStatus func(key string) core.Status
	// decideResult, when set, is what Decide returns.
	decideResult func(d core.Decision) (core.Approval, error)

	mu        sync.Mutex
	handled   []string
	convs     []string // of each handled message
	decisions []core.Decision
	system    []string // approvals denied by the system
	stops     int
	pending   sync.WaitGroup
}

func (e *scriptEngine) deliver(evs []core.Event) {
	e.pending.Add(1)
	go func() {
		defer e.pending.Done()
		time.Sleep(time.Millisecond) // deliver after the call returned, like the engine
		for _, ev := range evs {
			if ev.ConvKey == "" {
				ev.ConvKey = conv
			}
			if err := e.sender.Send(context.Background(), ev); err != nil {
				e.t.Errorf("Send(%s): %v", ev.Type, err)
			}
		}
	}()
}

func (e *scriptEngine) Handle(_ context.Context, in core.Inbound) error {
	e.mu.Lock()
	e.handled = append(e.handled, in.Text)
	e.convs = append(e.convs, in.ConvKey)
	e.mu.Unlock()
	if !strings.HasPrefix(in.ConvKey, terminal.ConvPrefix("alice")) || in.User != alice {
		e.t.Errorf("Handle got conv %q user %v", in.ConvKey, in.User)
	}
	if e.onHandle != nil {
		e.deliver(e.onHandle(in))
	}
	return nil
}

func (e *scriptEngine) Stop(context.Context, string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stops++
	return true
}

func (e *scriptEngine) Decide(_ context.Context, d core.Decision) (core.Approval, error) {
	e.mu.Lock()
	e.decisions = append(e.decisions, d)
	e.mu.Unlock()
	if e.onDecide != nil {
		e.deliver(e.onDecide(d))
	}
	if e.decideResult != nil {
		return e.decideResult(d)
	}
	return core.Approval{ID: d.ApprovalID}, nil
}

// DenyAsSystem records the denial and delivers what Decide would for it.
func (e *scriptEngine) DenyAsSystem(_ context.Context, id, reason string) (core.Approval, error) {
	e.mu.Lock()
	e.system = append(e.system, id+": "+reason)
	e.mu.Unlock()
	if e.onDecide != nil {
		e.deliver(e.onDecide(core.Decision{ApprovalID: id, Actor: core.SystemActor, Reason: reason}))
	}
	return core.Approval{ID: id}, nil
}

func (e *scriptEngine) Status(_ context.Context, key string) (core.Status, error) {
	if e.onStatus != nil {
		return e.onStatus(key), nil
	}
	return core.Status{}, nil
}

func (e *scriptEngine) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { e.pending.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newAdapter(t *testing.T, in io.Reader, interactive bool, e *scriptEngine) (*terminal.Adapter, *coretest.SyncBuffer) {
	t.Helper()
	return newAdapterWith(t, in, terminal.Options{Interactive: interactive}, e)
}

// newAdapterWith is newAdapter with more options; In, Out, User and
// ConvKey are set here.
func newAdapterWith(t *testing.T, in io.Reader, opts terminal.Options, e *scriptEngine) (*terminal.Adapter, *coretest.SyncBuffer) {
	t.Helper()
	out := &coretest.SyncBuffer{}
	opts.In, opts.Out, opts.User, opts.ConvKey = in, out, alice, conv
	a := terminal.New(opts)
	e.t, e.sender = t, a
	return a, out
}

func approval(id, tool string, risk core.Risk, args string) *core.Approval {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &core.Approval{
		ID: id, Tool: tool, Toolset: "k8s", Arguments: json.RawMessage(args), Risk: risk,
		ActionHash: "hash-" + id, Requester: alice, Status: core.ApprovalPending,
		CreatedAt: t0, ExpiresAt: t0.Add(30 * time.Minute),
	}
}

func call(id, name, args string) *core.CallInfo {
	return &core.CallInfo{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func decided(a *core.Approval, st core.ApprovalStatus, by core.Actor, reason string) *core.Approval {
	c := *a
	c.Status, c.DecidedBy, c.Reason = st, by, reason
	return &c
}

func tokens(s ...string) []core.Event {
	evs := []core.Event{{Type: core.EventGenerationStart}}
	for _, t := range s {
		evs = append(evs, core.Event{Type: core.EventToken, Text: t})
	}
	return append(evs, core.Event{Type: core.EventGenerationComplete, Text: strings.Join(s, "")})
}

func TestRenderEvents(t *testing.T) {
	scale := approval("a1", "scale_deployment", core.RiskWrite, `{"name":"web","replicas":3}`)
	drop := approval("a2", "delete_namespace", core.RiskDestructive, `{"namespace":"dev"}`)
	events := []core.Event{
		{Type: core.EventReady},
		{Type: core.EventGenerationStart},
		{Type: core.EventToken, Text: "Let me "},
		{Type: core.EventToken, Text: "check."},
		{Type: core.EventGenerationComplete, Text: "Let me check."},
		{Type: core.EventToolExecuting, Call: call("c1", "get_pods", `{"namespace":"prod","selector":"app in (web, api)"}`)},
		{Type: core.EventToolResult, Call: call("c1", "get_pods", ""), Duration: 400 * time.Millisecond},
		{Type: core.EventToolExecuting, Call: call("c2", "get_logs", `{"pod":"web-1"}`)},
		{Type: core.EventToolError, Call: call("c2", "get_logs", ""), Duration: 1200 * time.Millisecond, Error: "pod web-1\nnot found"},
		{Type: core.EventRateLimit, Attempt: 1, RetryAfter: 2 * time.Second},
		{Type: core.EventGenerationStart},
		{Type: core.EventGenerationComplete, Text: "No tokens streamed, whole text."},
		{Type: core.EventToolAwaitingApproval, Approval: scale},
		{Type: core.EventToolAwaitingApproval, Approval: drop},
		{Type: core.EventCompleted, Status: core.RunAwaitingApproval},
		{Type: core.EventToolApproved, Approval: decided(scale, core.ApprovalApproved, alice, "")},
		{Type: core.EventToolDenied, Approval: decided(drop, core.ApprovalDenied, alice, "not today")},
		{Type: core.EventToolExecuting, Call: call("c3", "scale_deployment", `{"name":"web","replicas":3}`)},
		{Type: core.EventToolResult, Call: call("c3", "scale_deployment", ""), Duration: 75 * time.Second},
		{Type: core.EventThinking, Text: "hmm"},
		{Type: core.EventGenerationStart},
		{Type: core.EventToken, Text: "Scaled web to 3; did not delete dev."},
		{Type: core.EventGenerationComplete, Text: "Scaled web to 3; did not delete dev."},
		{Type: core.EventCompleted, Status: core.RunDone},
		{Type: core.EventToolDenied, Approval: decided(scale, core.ApprovalExpired, core.Actor{}, "")},
		{Type: core.EventWorkflowError, Text: "model: fatal (HTTP 401): bad key"},
		{Type: core.EventCompleted, Status: core.RunError},
		{Type: core.EventCompleted, Status: core.RunStopped},
	}
	want := `Let me check.
⏳ get_pods namespace=prod selector="app in (web, api)"
✅ get_pods 0.4s
⏳ get_logs pod=web-1
❌ get_logs 1.2s: pod web-1 not found
… the model provider is rate limiting; retrying in 2.0s (attempt 1)
No tokens streamed, whole text.
⚠ approval needed: scale_deployment on k8s (write)
    arguments: {"name":"web","replicas":3}
    requested by alice, expires in 30m
⚠ approval needed: delete_namespace on k8s (DESTRUCTIVE)
    arguments: {"namespace":"dev"}
    requested by alice, expires in 30m
approve scale_deployment 1/2 (name=web replicas=3)? [y/N]
✔ scale_deployment approved by alice
✖ delete_namespace denied by alice: not today
⏳ scale_deployment name=web replicas=3
✅ scale_deployment 1m15s
Scaled web to 3; did not delete dev.
✖ scale_deployment: the approval expired
⚠ error: model: fatal (HTTP 401): bad key
⏹ stopped
`
	a, out := newAdapter(t, strings.NewReader(""), false, &scriptEngine{})
	for _, ev := range events {
		if err := a.Send(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("rendered (-want +got):\n%s", diff)
	}
}

func TestRenderInteractiveRedrawsStatusLine(t *testing.T) {
	a, out := newAdapterWith(t, strings.NewReader(""), terminal.Options{Interactive: true, Color: true}, &scriptEngine{})
	for _, ev := range []core.Event{
		{Type: core.EventToolExecuting, Call: call("c1", "get_pods", `{"namespace":"prod"}`)},
		{Type: core.EventToolResult, Call: call("c1", "get_pods", ""), Duration: 400 * time.Millisecond},
		{Type: core.EventCompleted, Status: core.RunDone},
	} {
		if err := a.Send(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	want := "⏳ get_pods namespace=prod\n\x1b[1A\r\x1b[2K\x1b[32m✅ \x1b[0mget_pods 0.4s\n\x1b[1m> \x1b[0m"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("rendered (-want +got):\n%s", diff)
	}
}

// approvalScript makes "scale" pause for two approvals and finish once
// both are decided.
func approvalScript() *scriptEngine {
	scale := approval("a1", "scale_deployment", core.RiskWrite, `{"replicas":3}`)
	restart := approval("a2", "restart_pod", core.RiskWrite, `{"pod":"web-1"}`)
	e := &scriptEngine{}
	e.onHandle = func(in core.Inbound) []core.Event {
		if in.Text != "scale" {
			return append([]core.Event{{Type: core.EventReady}}, append(tokens("echo: "+in.Text), core.Event{Type: core.EventCompleted, Status: core.RunDone})...)
		}
		return []core.Event{
			{Type: core.EventReady},
			{Type: core.EventToolAwaitingApproval, Approval: scale},
			{Type: core.EventToolAwaitingApproval, Approval: restart},
			{Type: core.EventCompleted, Status: core.RunAwaitingApproval},
		}
	}
	e.onDecide = func(d core.Decision) []core.Event {
		ap := scale
		if d.ApprovalID == restart.ID {
			ap = restart
		}
		ev := core.Event{Type: core.EventToolDenied, Approval: decided(ap, core.ApprovalDenied, alice, d.Reason)}
		if d.Approve {
			ev = core.Event{Type: core.EventToolApproved, Approval: decided(ap, core.ApprovalApproved, alice, "")}
		}
		evs := []core.Event{ev}
		if d.ApprovalID == restart.ID {
			evs = append(evs, tokens("done")...)
			evs = append(evs, core.Event{Type: core.EventCompleted, Status: core.RunDone})
		}
		return evs
	}
	return e
}

func TestRunAnswersApprovalsInOrder(t *testing.T) {
	e := approvalScript()
	// The lines arrive at once: the adapter must not read "yes" as a new
	// message before the run has paused.
	a, out := newAdapter(t, strings.NewReader("scale\nyes\nno, wrong pod\nthanks\n"), false, e)
	if err := a.Run(context.Background(), e); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []core.Decision{
		{ApprovalID: "a1", Actor: alice, Approve: true, ActionHash: "hash-a1"},
		{ApprovalID: "a2", Actor: alice, Approve: false, Reason: "no, wrong pod", ActionHash: "hash-a2"},
	}
	if diff := cmp.Diff(want, e.decisions); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"scale", "thanks"}, e.handled); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	for _, s := range []string{
		"approve scale_deployment 1/2 (replicas=3)? [y/N]\n✔ scale_deployment approved by alice\napprove restart_pod 2/2 (pod=web-1)? [y/N]\n",
		"✖ restart_pod denied by alice: no, wrong pod\ndone\n",
		"echo: thanks\n",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}

func TestRunDeniesUnansweredApprovalsAtEOF(t *testing.T) {
	e := approvalScript()
	a, out := newAdapter(t, strings.NewReader("scale\ny\n"), false, e)
	err := a.Run(context.Background(), e)
	if !errors.Is(err, terminal.ErrUnanswered) {
		t.Fatalf("Run = %v, want ErrUnanswered", err)
	}
	if len(e.decisions) != 1 || !e.decisions[0].Approve {
		t.Errorf("decisions = %+v, want alice's approval alone", e.decisions)
	}
	if diff := cmp.Diff([]string{"a2: no answer: input ended"}, e.system); diff != "" {
		t.Errorf("denials by the system (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "no answer for restart_pod: input ended, denying\n") {
		t.Errorf("output does not report the denial:\n%s", out.String())
	}
}

func TestRunStopAndQuit(t *testing.T) {
	e := &scriptEngine{}
	a, _ := newAdapter(t, strings.NewReader("/stop\n/quit\nnever sent\n"), false, e)
	if err := a.Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if e.stops != 2 || len(e.handled) != 0 { // /quit stops the active run too
		t.Errorf("stops = %d, handled = %q; want 2 stops and no message", e.stops, e.handled)
	}
}

func TestAskAnswersFromInput(t *testing.T) {
	e := approvalScript()
	a, out := newAdapter(t, strings.NewReader("y\ny\nnot a message\n"), false, e)
	if err := a.Ask(context.Background(), e, "scale"); err != nil {
		t.Fatal(err)
	}
	if len(e.decisions) != 2 || !e.decisions[0].Approve || !e.decisions[1].Approve {
		t.Errorf("decisions = %+v, want two approvals", e.decisions)
	}
	if diff := cmp.Diff([]string{"scale"}, e.handled); diff != "" {
		t.Errorf("Ask must send only its message (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(out.String(), "done\n") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestInterruptStopsThenQuits(t *testing.T) {
	in, w := io.Pipe()
	defer w.Close()
	e := &scriptEngine{onHandle: func(core.Inbound) []core.Event { return []core.Event{{Type: core.EventReady}} }}
	a, out := newAdapter(t, in, true, e)
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background(), e) }()
	if _, err := io.WriteString(w, "long task\n"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(out.String(), "> ") || len(handled(e)) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	a.Interrupt() // the run is active: stop it
	select {
	case err := <-done:
		t.Fatalf("Run returned after one Ctrl-C: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	a.Interrupt() // again, right away: quit
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if e.stops != 1 {
		t.Errorf("stops = %d, want 1", e.stops)
	}
	if !strings.Contains(out.String(), "^C stopping… (Ctrl-C again to quit)") {
		t.Errorf("output:\n%s", out.String())
	}
}

func handled(e *scriptEngine) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.handled...)
}

func TestInterruptWhenIdleQuits(t *testing.T) {
	in, w := io.Pipe()
	defer w.Close()
	e := &scriptEngine{}
	a, _ := newAdapter(t, in, true, e)
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background(), e) }()
	a.Interrupt()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if e.stops != 0 {
		t.Errorf("stops = %d, want 0", e.stops)
	}
}

func TestRunReportsFailedRun(t *testing.T) {
	e := &scriptEngine{onHandle: func(core.Inbound) []core.Event {
		return []core.Event{
			{Type: core.EventReady},
			{Type: core.EventWorkflowError, Text: "cannot reach the model server"},
			{Type: core.EventCompleted, Status: core.RunError},
		}
	}}
	a, out := newAdapter(t, strings.NewReader("hello\n"), false, e)
	if err := a.Run(context.Background(), e); !errors.Is(err, terminal.ErrRunFailed) {
		t.Errorf("Run = %v, want ErrRunFailed", err)
	}
	if want := "⚠ error: cannot reach the model server\n"; out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}
}

// A vote that does not reach the quorum is a progress line, not a second
// question; a stream's tail that was held back (the redactor holds what
// could still be a secret) is printed when the answer is complete.
func TestRenderQuorumProgressAndHeldBackTail(t *testing.T) {
	scale := approval("a1", "scale_deployment", core.RiskWrite, `{"name":"web","replicas":3}`)
	scale.Verdict = core.Verdict{Action: core.ActionAsk, Quorum: 2}
	voted := *scale
	voted.Votes = []core.Vote{{Person: "bob", Actor: core.Actor{ID: "slack:U0BOB", Name: "@bob"}, Approve: true}}
	events := []core.Event{
		{Type: core.EventGenerationStart},
		{Type: core.EventToken, Text: "The key is "},
		{Type: core.EventGenerationComplete, Text: "The key is [REDACTED:aws_access_key]."},
		{Type: core.EventToolAwaitingApproval, Approval: scale},
		{Type: core.EventToolAwaitingApproval, Approval: &voted},
	}
	a, out := newAdapter(t, strings.NewReader(""), false, &scriptEngine{})
	for _, ev := range events {
		if err := a.Send(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	got := out.String()
	if !strings.Contains(got, "The key is [REDACTED:aws_access_key].\n") {
		t.Errorf("the held-back tail was not printed:\n%s", got)
	}
	if !strings.Contains(got, "⏳ scale_deployment: 1 of 2 approvals: @bob\n") || strings.Count(got, "approval needed") != 1 {
		t.Errorf("want one question and a progress line:\n%s", got)
	}
}
