package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/memory/postgres"
)

// Issue 11, acceptance 6: a schedule "@every 2s" on two replicas sharing
// one Postgres, for about 20 s: every fire ran exactly once (one ledger row
// per fire time, one root message per fire in Slack, one answer in its
// thread), and a slow run makes the next fire skip, said in the channel.
func TestScheduleFiresOnceAcrossReplicas(t *testing.T) {
	dir := t.TempDir()
	sl := slacktest.New(t)
	model := llmfake.New(t)
	// The first fire's run is slow (6 s): the fires during it are skipped.
	model.Push(llmfake.Reply{Text: "tock 0", FirstTokenDelay: 6 * time.Second})
	for i := 1; i < 40; i++ {
		model.Push(llmfake.Reply{Text: fmt.Sprintf("tock %d", i)})
	}
	cfg := writeConfig(t, dir, model.URL, "", fmt.Sprintf(
		"slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n"+
			"schedules:\n  - {name: tick, cron: '@every 2s', prompt: 'tick', target: 'slack:C0SCHED'}\n",
		slacktest.BotToken, slacktest.AppToken, sl.APIURL()))
	url := usePostgres(t, cfg)

	a := startReplica(t, dir, cfg, "a")
	b := startReplica(t, dir, cfg, "b")
	time.Sleep(20 * time.Second)
	a.stop()
	b.stop()

	store, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fires, err := store.Fires(context.Background(), "tick", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fires) < 7 {
		t.Fatalf("%d fires recorded in 20 s of @every 2s, want about 10", len(fires))
	}
	var ran, skipped int
	byReplica := map[string]int{}
	for _, f := range fires {
		if f.At.Unix()%2 != 0 || f.At.Nanosecond() != 0 {
			t.Errorf("fire at %s: not a multiple of 2 s since the epoch", f.At)
		}
		byReplica[f.By]++
		switch f.Outcome {
		case core.FireDone, core.FireRunning, core.FireInterrupted:
			ran++
		case core.FireSkipped:
			skipped++
		default:
			t.Errorf("fire at %s: outcome %q", f.At, f.Outcome)
		}
	}
	if skipped == 0 {
		t.Errorf("no fire was skipped although the first run took 6 s: %+v", fires)
	}
	if len(byReplica) != 2 {
		t.Logf("fires by replica: %v (both replicas are expected to win some fires, but may not)", byReplica)
	}

	// In Slack: one root message per fire that ran, each naming its fire
	// time once, and one skip note per skipped fire.
	roots := sl.Messages("C0SCHED", "", nil)
	seen := map[string]int{}
	var runRoots, skipNotes int
	for _, m := range roots {
		switch {
		case strings.HasPrefix(m.Text, "⏰ Scheduled run of tick ("):
			runRoots++
			at := m.Text[len("⏰ Scheduled run of tick ("):strings.Index(m.Text, ")")]
			seen[at]++
			if seen[at] > 1 {
				t.Errorf("the fire at %s was posted twice", at)
			}
			answers := sl.BotReplies("C0SCHED", m.TS)
			n := 0
			for _, r := range answers {
				if strings.Contains(r.Text, "tock") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("fire %s: %d answers in its thread, want 1: %+v", at, n, answers)
			}
		case strings.HasPrefix(m.Text, "⏭ Skipped the "):
			skipNotes++
		}
	}
	if runRoots != ran || skipNotes != skipped {
		t.Errorf("Slack shows %d runs and %d skip notes; the ledger has %d runs and %d skips", runRoots, skipNotes, ran, skipped)
	}
	if reqs := len(model.Requests()); reqs != ran {
		t.Errorf("model requests = %d, want one per fire that ran (%d)", reqs, ran)
	}
}

// Issue 11, acceptance 7: a scheduled run proposes a write; its card names
// the schedule; the schedule's approver approves it; nobody else can.
func TestScheduledWriteGoesToTheSchedulesApprovers(t *testing.T) {
	dir := t.TempDir()
	sl := slacktest.New(t)
	sl.AddUser("U0ALICE", "alice")
	sl.AddUser("U0BOB", "bob")
	model := llmfake.New(t)
	k8s := mcpfake.New()
	model.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c0", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "scale_deployment", Arguments: `{"name":"web","replicas":2}`}}},
		llmfake.Reply{Text: "Scaled web back to 2 for the night."},
	)
	// alice is a platform approver, but not the schedule's.
	cfg := writeConfig(t, dir, model.URL, k8s.ServeHTTP(t), fmt.Sprintf(
		"slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n  approvers: [U0ALICE]\n"+
			"schedules:\n  - {name: nightly-scale, cron: '@every 3s', prompt: 'scale web down for the night', target: 'slack:C0OPS', approvers: ['slack:U0BOB']}\n",
		slacktest.BotToken, slacktest.AppToken, sl.APIURL()))
	s := serveConfig(t, cfg)
	sl.WaitConnected(t)

	var card slacktest.Message
	sl.Eventually(t, "the approval card of the scheduled run", func() bool {
		for _, root := range sl.Messages("C0OPS", "", nil) {
			for _, m := range sl.Messages("C0OPS", root.TS, nil) {
				if _, ok := m.Button("approve"); ok {
					card = m
					return true
				}
			}
		}
		return false
	})
	if !strings.Contains(card.Plain(), "schedule nightly-scale") {
		t.Errorf("the card does not name the schedule:\n%s", card.Plain())
	}
	approve, _ := card.Button("approve")
	sl.SendClick(t, sl.Click("U0ALICE", "alice", card, approve))
	sl.Eventually(t, "alice's refusal", func() bool { return len(sl.Ephemerals("U0ALICE")) > 0 })
	if got := sl.Ephemerals("U0ALICE")[0].Text; !strings.Contains(got, "bob") && !strings.Contains(got, "U0BOB") {
		t.Errorf("alice's refusal does not say who may decide: %q", got)
	}
	if n := len(k8s.Calls()); n != 0 {
		t.Fatalf("the tool ran after a click by someone who is not the schedule's approver")
	}
	sl.SendClick(t, sl.Click("U0BOB", "bob", card, approve))
	waitFor(t, 30*time.Second, "the tool to run", func() bool { return len(k8s.Calls()) > 0 })
	sl.Eventually(t, "the card to show bob's approval", func() bool {
		m, _ := sl.Message(card.Channel, card.TS)
		return strings.Contains(m.Plain(), "Approved by @bob")
	})
	s.stop(t)
	if calls := k8s.Calls(); len(calls) != 1 || calls[0].Tool != "scale_deployment" {
		t.Errorf("the MCP server ran %+v, want scale_deployment once", calls)
	}
}

// `opsgate schedules` lists the next fires; `schedules run NAME` fires one
// now in its own process, on SQLite, and exits 0 when its run completed.
func TestSchedulesListAndRun(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	model.Push(llmfake.Reply{Text: "All 12 nodes are Ready."}, llmfake.Reply{Status: 400, ErrorMessage: "model not loaded"})
	cfg := writeConfig(t, dir, model.URL, "", "schedules:\n  - {name: health, cron: '@every 1h', prompt: 'how are the nodes?', target: log}\n")

	code, stdout, stderr := runMain(t, testEnv(), "schedules", "--config", cfg)
	if code != exitOK || !strings.Contains(stdout, `health  "@every 1h" → log`) || strings.Count(stdout, "  next ") != 3 {
		t.Fatalf("schedules: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	code, stdout, stderr = runMain(t, testEnv(), "schedules", "run", "health", "--config", cfg)
	if code != exitOK || !strings.Contains(stderr, "schedule health ran in schedule:health:") {
		t.Fatalf("schedules run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1", n)
	}
	if got := string(model.Requests()[0].Raw); !strings.Contains(got, "how are the nodes?") {
		t.Errorf("the model was not sent the schedule's prompt:\n%s", got)
	}

	// A run that fails exits 1 and says why.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) // a new fire second
	code, _, stderr = runMain(t, testEnv(), "schedules", "run", "health", "--config", cfg)
	if code != exitError || !strings.Contains(stderr, "model not loaded") {
		t.Errorf("schedules run of a failing run: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runMain(t, testEnv(), "schedules", "run", "nope", "--config", cfg)
	if code != exitError || !strings.Contains(stderr, `no schedule named "nope"`) {
		t.Errorf("schedules run nope: exit %d, stderr:\n%s", code, stderr)
	}
}
