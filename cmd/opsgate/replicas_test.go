package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// The poller lease: two `opsgate serve` processes on one Postgres with
// the Telegram fake: the poller runs on exactly one; after kill -9 of that
// one, the other polls within 15 s and answers what arrives next, once.
func TestTelegramPollerTakeoverAfterKill9(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	model.Push(llmfake.Reply{Text: "Answered before the kill."}, llmfake.Reply{Text: "Answered after the takeover."})
	cfg := writeConfig(t, dir, model.URL, "", telegramConfig(tg))
	usePostgres(t, cfg)

	a := startReplica(t, dir, cfg, "a")
	waitFor(t, 15*time.Second, "replica a to take the poller lease", func() bool { return strings.Contains(a.log.String(), "lease: taken") })
	b := startReplica(t, dir, cfg, "b")
	waitFor(t, 15*time.Second, "replica b to stand by", func() bool { return strings.Contains(b.log.String(), "standing by") })

	chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")
	tg.Push(tg.NewTextUpdate(chat, alice, "first"))
	waitFor(t, 15*time.Second, "the first answer", func() bool { return answered(tg.Messages(42), "Answered before the kill.") })
	if strings.Contains(b.log.String(), "receiving updates by long polling") {
		t.Fatalf("both replicas poll:\n%s", b.log.String())
	}

	a.kill9()
	killed := time.Now()
	waitFor(t, 15*time.Second, "replica b to take over the poller", func() bool { return strings.Contains(b.log.String(), "receiving updates by long polling") })
	takeover := time.Since(killed)
	t.Logf("takeover after kill -9: %s", takeover.Round(time.Millisecond))

	// If a died before it released the conversation, its hold lapses first
	// (docs/design.md §12: within 30 s).
	tg.Push(tg.NewTextUpdate(chat, alice, "second"))
	waitFor(t, 30*time.Second, "the answer from replica b", func() bool { return answered(tg.Messages(42), "Answered after the takeover.") })
	b.stop()
	n := 0
	for _, m := range tg.Messages(42) {
		if strings.Contains(m.Visible, "Answered after the takeover.") {
			n++
		}
	}
	if n != 1 || len(model.Requests()) != 2 {
		t.Errorf("after the takeover: %d answers, %d model requests; want 1 and 2 in all", n, len(model.Requests()))
	}
}

// slackReplicas starts two replicas of the real binary on one Postgres,
// both connected to the Slack fake by Socket Mode: connection 0 is a's,
// connection 1 is b's.
func slackReplicas(t *testing.T, model *llmfake.Server, mcpURL, extra string) (sl *slacktest.Server, a, b *replica, dbURL string) {
	t.Helper()
	dir := t.TempDir()
	sl = slacktest.New(t)
	sl.AddUser("U0ALICE", "alice")
	sl.AddUser("U0BOB", "bob")
	cfg := writeConfig(t, dir, model.URL, mcpURL, fmt.Sprintf(
		"slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n  approvers: [U0BOB]\n",
		slacktest.BotToken, slacktest.AppToken, sl.APIURL())+extra)
	dbURL = usePostgres(t, cfg)
	a = startReplica(t, dir, cfg, "a")
	waitFor(t, 15*time.Second, "replica a's Socket Mode connection", func() bool { return sl.Connections() == 1 })
	b = startReplica(t, dir, cfg, "b")
	waitFor(t, 15*time.Second, "replica b's Socket Mode connection", func() bool { return sl.Connections() == 2 })
	return sl, a, b, dbURL
}

// Issue 11, acceptance 4: an approval requested while replica A ran the
// conversation is decided through replica B: the tool runs once; /stop
// sent to B stops a run on A within 1 s.
func TestDecisionAndStopThroughAnotherReplica(t *testing.T) {
	model := llmfake.New(t)
	k8s := mcpfake.New()
	hold := make(chan struct{})
	model.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c0", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "scale_deployment", Arguments: `{"name":"web","replicas":3}`}}},
		llmfake.Reply{Text: "Web runs 3 replicas now."},
		// Streams its first word, then holds until the client goes away.
		llmfake.Reply{Text: "Looking at every pod in every namespace", Hold: hold},
	)
	defer close(hold)
	sl, _, _, dbURL := slackReplicas(t, model, k8s.ServeHTTP(t), "")

	root, ev := sl.Mention("C0OPS", "U0ALICE", "scale web to 3", "")
	sl.SendEventOn(t, 0, ev) // to replica a
	var card slacktest.Message
	sl.Eventually(t, "the approval card", func() bool {
		for _, m := range sl.Messages("C0OPS", root, nil) {
			if _, ok := m.Button("approve"); ok {
				card = m
				return true
			}
		}
		return false
	})
	approve, _ := card.Button("approve")
	sl.SendClickOn(t, 1, sl.Click("U0BOB", "bob", card, approve)) // to replica b
	sl.Eventually(t, "the answer after the approval", func() bool {
		for _, m := range sl.BotReplies("C0OPS", root) {
			if strings.Contains(m.Plain(), "Web runs 3 replicas now.") {
				return true
			}
		}
		return false
	})
	if calls := k8s.Calls(); len(calls) != 1 {
		t.Fatalf("the tool ran %d times, want once: %+v", len(calls), calls)
	}

	// A slow run in the thread on a; "stop" reaches b.
	_, ev = sl.Say("C0OPS", "U0ALICE", "now check every pod", root)
	sl.SendEventOn(t, 0, ev)
	sl.Eventually(t, "the slow reply to stream", func() bool {
		for _, m := range sl.BotReplies("C0OPS", root) {
			if strings.Contains(m.Plain(), "Looking") {
				return true
			}
		}
		return false
	})
	_, ev = sl.Say("C0OPS", "U0ALICE", "stop", root)
	sent := time.Now()
	sl.SendEventOn(t, 1, ev)
	var stoppedAfter time.Duration
	sl.Eventually(t, "the run on a to stop", func() bool {
		for _, m := range sl.BotReplies("C0OPS", root) {
			if strings.Contains(m.Plain(), "Stopped.") {
				stoppedAfter = time.Since(sent)
				return true
			}
		}
		return false
	})
	// When the run ended, as the replica that ran it recorded it (the
	// thread shows it at the next edit Slack allows, up to 1 s later).
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var status string
	var ended time.Time
	if err := conn.QueryRow(context.Background(), `SELECT status, ended_at FROM runs
		WHERE conv_key = $1 ORDER BY started_at DESC LIMIT 1`, "slack:"+slacktest.TeamID+":C0OPS:"+root).Scan(&status, &ended); err != nil {
		t.Fatal(err)
	}
	took := ended.Sub(sent)
	t.Logf("stop through replica b: the run on replica a ended %s later (shown in Slack after %s)", took.Round(time.Millisecond), stoppedAfter.Round(time.Millisecond))
	if status != "stopped" || took > time.Second {
		t.Errorf("the last run is %s, %s after the stop; want stopped within 1 s", status, took)
	}
}

// Issue 11, acceptance 3: two replicas on one Postgres, both connected by
// Socket Mode; 50 messages in 10 threads spread over both connections:
// each is answered exactly once, and each thread's runs are strictly one
// at a time (followup mode: a run per message).
func TestSlackMessagesOverTwoReplicasRunOncePerThreadInOrder(t *testing.T) {
	model := llmfake.New(t)
	var answered atomic.Int64
	model.SetResponder(func(req llmfake.Request) llmfake.Reply {
		if isTitleRequest(req) { // each thread's third exchange titles it
			return llmfake.Reply{Text: "A thread"}
		}
		return llmfake.Reply{Text: fmt.Sprintf("answer-%02d", answered.Add(1)-1), FirstTokenDelay: 50 * time.Millisecond}
	})
	sl, _, _, dbURL := slackReplicas(t, model, "", "session:\n  queue_mode: followup\n")

	var roots []string
	for i := range 10 {
		root, ev := sl.Mention("C0OPS", "U0ALICE", fmt.Sprintf("thread %d message 0", i), "")
		sl.SendEventOn(t, i%2, ev)
		roots = append(roots, root)
	}
	for j := 1; j < 5; j++ {
		for i, root := range roots {
			_, ev := sl.Say("C0OPS", "U0ALICE", fmt.Sprintf("thread %d message %d", i, j), root)
			sl.SendEventOn(t, (i+j)%2, ev)
		}
	}
	answers := func(root string) int {
		n := 0
		for _, m := range sl.BotReplies("C0OPS", root) {
			n += strings.Count(m.Plain(), "answer-")
		}
		return n
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		total := 0
		var per []int
		for _, r := range roots {
			per = append(per, answers(r))
			total += per[len(per)-1]
		}
		if total >= 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d answers after 90 s, want 50: per thread %v; model requests %d", total, per, len(model.Requests()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // anything extra would show now
	for i, r := range roots {
		if n := answers(r); n != 5 {
			t.Errorf("thread %d: %d answers, want 5", i, n)
		}
	}
	if n := answered.Load(); n != 50 {
		t.Errorf("answering model requests = %d, want 50", n)
	}

	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for i, r := range roots {
		rows, err := conn.Query(context.Background(), `SELECT started_at, ended_at, status FROM runs
			WHERE conv_key = $1 ORDER BY started_at`, "slack:"+slacktest.TeamID+":C0OPS:"+r)
		if err != nil {
			t.Fatal(err)
		}
		var prevEnd time.Time
		n := 0
		for rows.Next() {
			var start, end time.Time
			var status string
			if err := rows.Scan(&start, &end, &status); err != nil {
				t.Fatal(err)
			}
			if status != "done" {
				t.Errorf("thread %d: a run ended %s", i, status)
			}
			if start.Before(prevEnd) {
				t.Errorf("thread %d: a run started at %s, before the previous one ended at %s", i, start, prevEnd)
			}
			prevEnd = end
			n++
		}
		rows.Close()
		if n != 5 {
			t.Errorf("thread %d: %d runs, want 5", i, n)
		}
	}
}

// Issue 11, acceptance 9: PostgreSQL goes away for 5 s in the middle of a
// conversation (the server is stopped and started again): the run in
// flight completes or fails with a readable message, the process does not
// crash, and new messages work once the server is back.
func TestPostgresOutageMidConversation(t *testing.T) {
	pgtest.Server(t)               // skips (or fails under CI) without PostgreSQL
	cluster, err := pgtest.Start() // its own server: the others' tests go on
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	model.Push(
		llmfake.Reply{Text: "Checked during the outage.", FirstTokenDelay: 2 * time.Second},
		llmfake.Reply{Text: "Back to normal."},
	)
	cfg := writeConfig(t, dir, model.URL, "", telegramConfig(tg))
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(?m)^  url: sqlite://.*$`).ReplaceAll(b, []byte("  url: "+cluster.URL("postgres")))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := startReplica(t, dir, cfg, "a")
	chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")
	tg.Push(tg.NewTextUpdate(chat, alice, "check the cluster"))
	waitFor(t, 15*time.Second, "the model request", func() bool { return len(model.Requests()) == 1 })
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if err := cluster.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the run in flight to end", func() bool {
		for _, m := range tg.Messages(42) {
			if strings.Contains(m.Visible, "Checked during the outage.") || strings.Contains(m.Visible, "⚠️") {
				return true
			}
		}
		return false
	})
	select {
	case <-r.done:
		t.Fatalf("serve exited during the outage:\n%s", r.log.String())
	default:
	}
	tg.Push(tg.NewTextUpdate(chat, alice, "and now?"))
	waitFor(t, 30*time.Second, "an answer after the outage", func() bool { return answered(tg.Messages(42), "Back to normal.") })
	r.stop()
	for _, m := range tg.Messages(42) {
		t.Logf("chat: %q", m.Visible)
	}
}

// telegramReplicas starts two replicas on one Postgres with the Telegram
// fake; a holds the poller lease, b stands by.
func telegramReplicas(t *testing.T, tg *telegramtest.Server, model *llmfake.Server, mcpURL, extra string) (a, b *replica, dbURL string) {
	t.Helper()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, model.URL, mcpURL, telegramConfig(tg)+extra)
	dbURL = usePostgres(t, cfg)
	a = startReplica(t, dir, cfg, "a")
	waitFor(t, 15*time.Second, "replica a to take the poller lease", func() bool { return strings.Contains(a.log.String(), "lease: taken") })
	b = startReplica(t, dir, cfg, "b")
	waitFor(t, 15*time.Second, "replica b to stand by", func() bool { return strings.Contains(b.log.String(), "standing by") })
	return a, b, dbURL
}

// Issue 11, acceptance 2: kill -9 of the replica that polls Telegram in
// the middle of a streamed reply: within 15 s the other polls; the
// interrupted message is answered with the retry note; a message sent
// right after the kill is not lost; nothing is answered twice.
func TestKilledReplicaMidReplyIsTakenOver(t *testing.T) {
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	hold := make(chan struct{})
	defer close(hold)
	model.Push(
		llmfake.Reply{Text: "Partial answer that never finishes", Hold: hold},
		llmfake.Reply{Text: "The full answer, after the takeover."},
		llmfake.Reply{Text: "The answer to the second message."},
	)
	// followup: each message gets a run (and an answer) of its own.
	a, b, _ := telegramReplicas(t, tg, model, "", "session:\n  queue_mode: followup\n")
	chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")
	tg.Push(tg.NewTextUpdate(chat, alice, "what is wrong with payments?"))
	waitFor(t, 15*time.Second, "the reply to start streaming", func() bool { return answered(tg.Messages(42), "Partial") })

	a.kill9()
	killed := time.Now()
	tg.Push(tg.NewTextUpdate(chat, alice, "and checkout?"))
	waitFor(t, 15*time.Second, "replica b to poll", func() bool { return strings.Contains(b.log.String(), "receiving updates by long polling") })
	t.Logf("poller takeover after kill -9: %s", time.Since(killed).Round(time.Millisecond))
	waitFor(t, 45*time.Second, "the interrupted message to be answered", func() bool {
		return answered(tg.Messages(42), "The full answer, after the takeover.")
	})
	waitFor(t, 30*time.Second, "the second message to be answered", func() bool {
		return answered(tg.Messages(42), "The answer to the second message.")
	})
	t.Logf("interrupted message answered %s after the kill", time.Since(killed).Round(time.Millisecond))
	time.Sleep(time.Second)
	b.stop()
	var retry, full, second int
	for _, m := range tg.Messages(42) {
		retry += strings.Count(m.Visible, "picking this up again")
		full += strings.Count(m.Visible, "The full answer, after the takeover.")
		second += strings.Count(m.Visible, "The answer to the second message.")
	}
	if retry != 1 || full != 1 || second != 1 {
		t.Errorf("retry notes %d, full answers %d, second answers %d; want 1 each", retry, full, second)
		for _, m := range tg.Messages(42) {
			t.Logf("chat: %q", m.Visible)
		}
	}
	if n := len(model.Requests()); n != 3 {
		t.Errorf("model requests = %d, want 3", n)
	}
}

// Issue 11, acceptance 5: a write tool executing when its replica is
// killed: the survivor does not run it again, the conversation is told its
// outcome is unknown, and the audit shows it.
func TestWriteExecutingWhenReplicaDiesIsNotRunAgain(t *testing.T) {
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	k8s := mcpfake.New()
	model.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c0", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "drain_node", Arguments: `{"node":"node-7","seconds":60}`}}},
		llmfake.Reply{Text: "I will not drain node-7 again until someone checks it."},
	)
	a, _, dbURL := telegramReplicas(t, tg, model, k8s.ServeHTTP(t), "")
	chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")
	tg.Push(tg.NewTextUpdate(chat, alice, "drain node-7"))
	card := waitCard(t, tg, 42)
	tg.Click(42, card.ID, alice, card.Buttons[0].Data)
	waitFor(t, 15*time.Second, "the drain to start", func() bool { return len(k8s.Calls()) == 1 })

	a.kill9()
	waitFor(t, 45*time.Second, "the conversation to be told the outcome is unknown", func() bool {
		return answered(tg.Messages(42), "outcome is unknown")
	})
	waitFor(t, 30*time.Second, "the model's answer", func() bool {
		return answered(tg.Messages(42), "I will not drain node-7 again")
	})
	time.Sleep(time.Second)
	if n := len(k8s.Calls()); n != 1 {
		t.Errorf("drain_node ran %d times, want once (never again after the replica died)", n)
	}
	// The model was told, in its own words, before it planned again.
	reqs := model.Requests()
	if last := string(reqs[len(reqs)-1].Raw); !strings.Contains(last, "outcome is unknown") {
		t.Errorf("the model was not told that the outcome is unknown:\n%s", last)
	}
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM audit WHERE kind = 'outcome_unknown' AND tool = 'drain_node'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("outcome_unknown audit entries for drain_node = %d, %v; want 1", n, err)
	}
}
