package terminal_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/internal/golden"
)

// Issue 22 acceptance 4: golden files of the terminal's approval prompt
// as a person sees it (testdata/golden; -update rewrites them): a session
// that asks two approvals and answers them, and an interactive prompt; every
// way a request ends; and the line for every decision that did not take.
func TestTerminalApprovalPromptGolden(t *testing.T) {
	t.Run("approval-session.txt", func(t *testing.T) {
		e := approvalScript()
		a, out := newAdapter(t, strings.NewReader("scale\nyes\nno, wrong pod\n"), false, e)
		if err := a.Run(context.Background(), e); err != nil {
			t.Fatalf("Run: %v", err)
		}
		golden.Check(t, filepath.Join("testdata", "golden", "approval-session.txt"), []byte(out.String()))
	})
	t.Run("approval-prompt-interactive.txt", func(t *testing.T) {
		scale := approval("a1", "scale_deployment", core.RiskWrite, `{"name":"web","replicas":3}`)
		e := &scriptEngine{
			onHandle: func(core.Inbound) []core.Event {
				return []core.Event{{Type: core.EventReady}, {Type: core.EventToolAwaitingApproval, Approval: scale},
					{Type: core.EventCompleted, Status: core.RunAwaitingApproval}}
			},
			onDecide: func(d core.Decision) []core.Event {
				return append([]core.Event{{Type: core.EventToolApproved, Approval: decided(scale, core.ApprovalApproved, alice, "")}},
					append(tokens("Scaled web to 3."), core.Event{Type: core.EventCompleted, Status: core.RunDone})...)
			},
		}
		// Each line is typed once what it answers is on the screen.
		in, w := io.Pipe()
		a, out := newAdapterWith(t, in, terminal.Options{Interactive: true}, e)
		done := make(chan error, 1)
		go func() { done <- a.Run(context.Background(), e) }()
		for _, step := range []struct{ after, line string }{{"> ", "scale"}, {"? [y/N] ", "yes"}, {"Scaled web to 3.\n> ", "/quit"}} {
			waitFor(t, out, step.after)
			fmt.Fprintln(w, step.line)
		}
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		w.Close()
		golden.Check(t, filepath.Join("testdata", "golden", "approval-prompt-interactive.txt"), []byte(out.String()))
	})

	t.Run("approval-outcomes.txt", func(t *testing.T) {
		scale := approval("a1", "scale_deployment", core.RiskWrite, `{"name":"web","replicas":3}`)
		a, out := newAdapter(t, strings.NewReader(""), false, &scriptEngine{})
		evs := []core.Event{{Type: core.EventToolAwaitingApproval, Approval: scale}, {Type: core.EventCompleted, Status: core.RunAwaitingApproval}}
		bob := core.Actor{ID: "bob", Name: "bob"}
		for _, end := range []struct {
			st     core.ApprovalStatus
			by     core.Actor
			reason string
		}{
			{core.ApprovalApproved, bob, ""}, {core.ApprovalDenied, bob, "not during the freeze"}, {core.ApprovalDenied, core.SystemActor, terminal.NoAnswerReason},
			{core.ApprovalExpired, core.Actor{}, ""}, {core.ApprovalSuperseded, core.Actor{}, ""}, {core.ApprovalCancelled, core.Actor{}, ""},
		} {
			typ := core.EventToolDenied
			if end.st == core.ApprovalApproved {
				typ = core.EventToolApproved
			}
			evs = append(evs, core.Event{Type: typ, Approval: decided(scale, end.st, end.by, end.reason)})
		}
		for _, ev := range evs {
			if err := a.Send(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
		}
		golden.Check(t, filepath.Join("testdata", "golden", "approval-outcomes.txt"), []byte(out.String()))
	})

	t.Run("decision-refusals.txt", func(t *testing.T) {
		var all strings.Builder
		bob := core.Actor{ID: "bob", Name: "bob"}
		got := core.Approval{ID: "a1", Tool: "scale_deployment", Status: core.ApprovalApproved, DecidedBy: bob,
			Verdict: core.Verdict{Quorum: 2}, Votes: []core.Vote{{Person: "bob", Actor: bob, Approve: true}}}
		results := []struct {
			name string
			got  core.Approval
			err  error
		}{
			{"counted", core.Approval{ID: "a1", Tool: "scale_deployment", Status: core.ApprovalPending, Verdict: core.Verdict{Quorum: 2},
				Votes: []core.Vote{{Person: "alice", Actor: alice, Approve: true}}}, nil},
			{"refused by the policy", got, &core.NotAllowedError{Reason: "Only bob (approvers: sre) may decide this request."}},
		}
		for _, k := range core.Kinds() {
			results = append(results, struct {
				name string
				got  core.Approval
				err  error
			}{k.String(), got, fmt.Errorf("core: decide: %w", core.NewKindError(k, "what failed"))})
		}
		for _, r := range results {
			e := oneApprovalScript(func(core.Decision) (core.Approval, error) { return r.got, r.err })
			a, out := newAdapter(t, strings.NewReader("scale\ny\n"), false, e)
			if err := a.Run(context.Background(), e); err != nil {
				t.Fatalf("%s: Run: %v", r.name, err)
			}
			_, answer, _ := strings.Cut(out.String(), "[y/N]\n")
			fmt.Fprintf(&all, "# %s\n%s", r.name, answer)
		}
		golden.Check(t, filepath.Join("testdata", "golden", "decision-refusals.txt"), []byte(all.String()))
	})
}

// waitFor waits until out shows s.
func waitFor(t *testing.T, out *coretest.SyncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("output never showed %q:\n%q", s, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
