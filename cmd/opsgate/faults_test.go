package main

// The fault suite (docs/design.md §16): real `opsgate serve` binaries, two at a
// time, on a real PostgreSQL that is restarted, cut off or black-holed
// under them, and replicas that are stopped or killed mid-approval,
// mid-tool-call and mid-fire. Every scenario asserts what §16 promises:
// each message answered exactly once, no tool call run twice, no approval
// lost or decided twice, `opsgate audit verify` passes, schedules keep
// firing.
//
// The scenarios that restart PostgreSQL each get a cluster of their own, so
// they run in parallel (t.Parallel) and the suite takes about as long as
// its longest scenario; the others share the package's cluster.

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/internal/faultproxy"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// faultScenarios is how many fault scenarios run at once unless -parallel
// says otherwise. They wait far more than they compute (PostgreSQL down for
// 30 s, a 60 s quiet window), so the default -parallel (GOMAXPROCS, 2 on a
// small CI runner) would make the package wait for them one pair at a time,
// minutes on end. They are the package's only parallel tests.
const faultScenarios = 12

// faultParallel raises -parallel to faultScenarios when the command line
// did not set it. TestMain calls it before the tests run.
func faultParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); !set && p != nil {
		if n, err := strconv.Atoi(p.Value.String()); err == nil && n < faultScenarios {
			_ = p.Value.Set(strconv.Itoa(faultScenarios))
		}
	}
}

// quietWindow is how long, after a fault and its answers, nothing may be
// taken up, asked of the model or posted (§16: "after a store outage of up
// to 60 s … no replica takes up a run of a replica that is alive"). It is
// the one wait in this file that is itself the assertion.
const quietWindow = 60 * time.Second

// settle is how long a scenario that killed or stopped a replica watches
// for a duplicate after its last answer: more than a sweep (3 s) and a
// heartbeat (5 s) of the survivor, so a take-up that was coming shows.
const settle = 8 * time.Second

// The two questions of the PostgreSQL scenarios: the first is answered
// slowly (the fault hits while it streams), the second after the fault.
const (
	slowQuestion  = "what is wrong with payments?"
	slowAnswerEnd = "END-payments."
	afterQuestion = "and checkout?"
	afterAnswer   = "Checkout is fine. END-checkout."
	// tickEvery is the schedule the PostgreSQL scenarios' replicas fire
	// meanwhile (answered in the log only): fires must go on after the fault.
	tickEvery    = 5 * time.Second
	tickSchedule = "schedules:\n  - {name: tick, cron: '@every 5s', prompt: 'tick', target: log}\n"
)

// lastUser is the text of a request's last user message.
func lastUser(req llmfake.Request) string {
	us := userMessages(req)
	if len(us) == 0 {
		return ""
	}
	return us[len(us)-1]
}

// outageModel streams a long answer (60 words over streamFor) to
// slowQuestion and a short one to afterQuestion.
func outageModel(t *testing.T, streamFor time.Duration) *llmfake.Server {
	model := llmfake.New(t)
	var long strings.Builder
	long.WriteString("Payments")
	for i := range 58 {
		fmt.Fprintf(&long, " word%02d", i)
	}
	long.WriteString(" " + slowAnswerEnd)
	model.SetResponder(func(req llmfake.Request) llmfake.Reply {
		switch {
		case isTitleRequest(req):
			return llmfake.Reply{Text: "Payments"}
		case lastUser(req) == slowQuestion:
			return llmfake.Reply{Text: long.String(), TokenDelay: streamFor / 60}
		case lastUser(req) == afterQuestion:
			return llmfake.Reply{Text: afterAnswer}
		case lastUser(req) == "tick":
			return llmfake.Reply{Text: "tock"}
		}
		return llmfake.Reply{Text: "unexpected request " + lastUser(req)}
	})
	return model
}

// modelCalls counts the model requests that answer question (titles
// aside).
func modelCalls(model *llmfake.Server, question string) int {
	n := 0
	for _, r := range model.Requests() {
		if !isTitleRequest(r) && lastUser(r) == question {
			n++
		}
	}
	return n
}

// count is how many messages of a Telegram chat show text.
func count(msgs []telegramtest.Message, text string) int {
	n := 0
	for _, m := range msgs {
		n += strings.Count(m.Visible, text)
	}
	return n
}

// retryNotes counts the retry notes of a chat (core.RetryNote).
func retryNotes(msgs []telegramtest.Message) int { return count(msgs, "picking this up again") }

// faultPair is two replicas of the real binary with the Telegram fake on a
// PostgreSQL cluster of the test's own: a polls Telegram, b stands by.
type faultPair struct {
	pg    *pgtest.Cluster
	proxy *faultproxy.Proxy // between a and PostgreSQL, when asked for
	tg    *telegramtest.Server
	a, b  *replica
	dirB  string
	cfgB  string // names PostgreSQL directly
}

type faultPairOpts struct {
	// durable starts PostgreSQL with synchronous commits: an immediate
	// stop then loses nothing a client was told is committed.
	durable bool
	// proxied connects a to PostgreSQL through a faultproxy.
	proxied bool
	// streamFor is how long the first answer streams: longer than the
	// fault, so that the run is still going on a when the store returns
	// (a run that ended meanwhile leaves nothing to take up).
	streamFor time.Duration
}

func startFaultPair(t *testing.T, model *llmfake.Server, o faultPairOpts) *faultPair {
	t.Helper()
	pgtest.Server(t) // skips (or fails under CI) without PostgreSQL
	start := pgtest.Start
	if o.durable {
		start = pgtest.StartDurable
	}
	pg, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close) // after the replicas' cleanups (LIFO)
	p := &faultPair{pg: pg, tg: telegramtest.New(t)}
	urlA, urlB := pg.URL("postgres"), pg.URL("postgres")
	if o.proxied {
		if p.proxy, err = faultproxy.Start(fmt.Sprintf("127.0.0.1:%d", pg.Port())); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.proxy.Close)
		urlA = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", p.proxy.Addr())
	}
	// followup: each message gets a run (and an answer) of its own.
	extra := telegramConfig(p.tg) + "session:\n  queue_mode: followup\n" + tickSchedule
	dirA := t.TempDir()
	cfgA := writeConfig(t, dirA, model.URL, "", extra)
	setStoreURL(t, cfgA, urlA)
	p.dirB = t.TempDir()
	p.cfgB = writeConfig(t, p.dirB, model.URL, "", extra)
	setStoreURL(t, p.cfgB, urlB)

	p.a = startReplica(t, dirA, cfgA, "a")
	waitFor(t, 15*time.Second, "replica a to take the poller lease", func() bool { return strings.Contains(p.a.log.String(), "lease: taken") })
	p.b = startReplica(t, p.dirB, p.cfgB, "b")
	waitFor(t, 15*time.Second, "replica b to stand by", func() bool { return strings.Contains(p.b.log.String(), "standing by") })
	return p
}

// logChatOnFailure logs what chat shows when t ends failed, also after a
// Fatal.
func logChatOnFailure(t *testing.T, tg *telegramtest.Server, chat int64) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range tg.Messages(chat) {
				t.Logf("chat: %q (buttons %d)", m.Visible, len(m.Buttons))
			}
		}
	})
}

// takeUps counts the runs the replicas took up from another process.
func takeUps(rs ...*replica) int {
	n := 0
	for _, r := range rs {
		n += strings.Count(r.log.String(), "taking up a run")
	}
	return n
}

// assertAlive fails the test for a replica that exited.
func assertAlive(t *testing.T, rs ...*replica) {
	t.Helper()
	for _, r := range rs {
		select {
		case <-r.done:
			t.Errorf("replica %s exited:\n%s", r.name, r.log.String())
		default:
		}
	}
}

// assertQuiet watches for window and fails if meanwhile a replica took up
// a run, the model was asked anything (but the schedule's fires), or the
// chat changed.
func assertQuiet(t *testing.T, window time.Duration, tg *telegramtest.Server, chat int64, model *llmfake.Server, rs ...*replica) {
	t.Helper()
	shown := func() string {
		var b strings.Builder
		for _, m := range tg.Messages(chat) {
			fmt.Fprintf(&b, "%d: %q\n", m.ID, m.Visible)
		}
		return b.String()
	}
	asked := func() int {
		n := 0
		for _, r := range model.Requests() {
			if lastUser(r) != "tick" {
				n++
			}
		}
		return n
	}
	ups, calls, chat0 := takeUps(rs...), asked(), shown()
	time.Sleep(window)
	if n := takeUps(rs...); n != ups {
		t.Errorf("in the %s after the fault, replicas took up %d runs (%d before)", window, n-ups, ups)
	}
	if n := asked(); n != calls {
		t.Errorf("in the %s after the fault, the model was asked %d more times", window, n-calls)
	}
	if now := shown(); now != chat0 {
		t.Errorf("in the %s after the fault, the chat changed:\nbefore:\n%safter:\n%s", window, chat0, now)
	}
}

// auditVerify runs `opsgate audit verify` against the store of cfg.
func auditVerify(t *testing.T, dir, cfg string) {
	t.Helper()
	stdout, stderr, code := runBinary(t, dir, "", "audit", "verify", "--config", cfg)
	if code != 0 {
		t.Errorf("audit verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// outageScenario is the PostgreSQL scenarios' common course: a message
// whose answer streams when fault hits; it is answered once (at most one
// retry note, the model asked at most twice for it); a message sent after
// the fault is answered once; then for quietWindow nothing is taken up,
// asked or posted; and the audit chain verifies.
func outageScenario(t *testing.T, o faultPairOpts, fault func(p *faultPair)) {
	model := outageModel(t, o.streamFor)
	p := startFaultPair(t, model, o)
	chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")
	msgs := func() []telegramtest.Message { return p.tg.Messages(42) }
	logChatOnFailure(t, p.tg, 42)

	p.tg.Push(p.tg.NewTextUpdate(chat, alice, slowQuestion))
	waitFor(t, 30*time.Second, "the slow answer to stream", func() bool { return answered(msgs(), "word03") })
	fault(p)
	back := time.Now()

	// Answered — or, for a store that stayed down past the run's retries,
	// ended with a readable error (§16); in both cases once.
	waitFor(t, 90*time.Second, "the first message to be answered", func() bool {
		return answered(msgs(), slowAnswerEnd) || answered(msgs(), "⚠️")
	})
	t.Logf("first message answered %s after the store came back", time.Since(back).Round(time.Millisecond))
	p.tg.Push(p.tg.NewTextUpdate(chat, alice, afterQuestion))
	waitFor(t, 60*time.Second, "the message sent after the fault to be answered", func() bool { return answered(msgs(), afterAnswer) })
	t.Logf("second message answered %s after the store came back", time.Since(back).Round(time.Millisecond))

	quiet := time.Now()
	assertQuiet(t, quietWindow, p.tg, 42, model, p.a, p.b)
	assertAlive(t, p.a, p.b)

	// The schedule kept firing through the quiet window, each fire once
	// (the ledger has one row per fire time) and none left blocking.
	done := 0
	for _, f := range fires(t, p.pg.URL("postgres"), "tick") {
		if f.At.After(quiet) && f.At.Before(quiet.Add(quietWindow-tickEvery)) && f.Outcome == core.FireDone {
			done++
		}
	}
	if want := int(quietWindow/tickEvery) / 2; done < want {
		t.Errorf("%d fires of an @every %s schedule done in the %s after the fault, want at least %d", done, tickEvery, quietWindow, want)
	}

	full := count(msgs(), slowAnswerEnd)
	if full > 1 || full == 0 && !answered(msgs(), "⚠️") {
		t.Errorf("the first message was answered %d times, want once (or one error)", full)
	}
	if n := count(msgs(), afterAnswer); n != 1 {
		t.Errorf("the message sent after the fault was answered %d times, want once", n)
	}
	if n := retryNotes(msgs()); n > 1 {
		t.Errorf("%d retry notes, want at most one", n)
	}
	if n := modelCalls(model, slowQuestion); n > 2 {
		t.Errorf("the model was asked %d times for the first message, want at most twice", n)
	}
	if n := modelCalls(model, afterQuestion); n != 1 {
		t.Errorf("the model was asked %d times for the message after the fault, want once", n)
	}
	if n := takeUps(p.a, p.b); n > 1 {
		t.Errorf("replicas took up %d runs of each other's although both lived, want at most the one retry", n)
	}
	auditVerify(t, p.dirB, p.cfgB)
}

// §16: PostgreSQL fast restart (pg_ctl -m fast: every session is cut,
// every advisory lock dropped) while a's answer streams.
func TestFaultPostgresFastRestartAnswersOnce(t *testing.T) {
	t.Parallel()
	outageScenario(t, faultPairOpts{streamFor: 9 * time.Second}, func(p *faultPair) {
		if err := p.pg.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := p.pg.Restart(); err != nil {
			t.Fatal(err)
		}
	})
}

// §16: PostgreSQL immediate restart (a crash and crash recovery).
func TestFaultPostgresImmediateRestart(t *testing.T) {
	t.Parallel()
	outageScenario(t, faultPairOpts{durable: true, streamFor: 9 * time.Second}, func(p *faultPair) {
		if err := p.pg.StopImmediate(); err != nil {
			t.Fatal(err)
		}
		if err := p.pg.Restart(); err != nil {
			t.Fatal(err)
		}
	})
}

// §16: PostgreSQL unreachable for 30 s (stopped, then started again).
func TestFaultPostgresUnreachable30s(t *testing.T) {
	t.Parallel()
	outageScenario(t, faultPairOpts{streamFor: 40 * time.Second}, func(p *faultPair) {
		if err := p.pg.Stop(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second) // the outage itself
		if err := p.pg.Restart(); err != nil {
			t.Fatal(err)
		}
	})
}

// §16: the TCP path between replica a (which runs the conversation and
// polls Telegram) and PostgreSQL drops every packet for 20 s without a FIN
// or RST either way; the server still sees a's sessions, and b a live a.
func TestFaultSilentDrop20s(t *testing.T) {
	t.Parallel()
	outageScenario(t, faultPairOpts{proxied: true, streamFor: 30 * time.Second}, func(p *faultPair) {
		p.proxy.Blackhole()
		time.Sleep(20 * time.Second) // the outage itself
		p.proxy.Resume()
	})
}

// toolModel scripts a run that loads the k8s toolset, calls tool with args
// and then answers final; once told a call's outcome is unknown it answers
// final too and never calls again.
func toolModel(t *testing.T, tool, args, final string) *llmfake.Server {
	model := llmfake.New(t)
	model.SetResponder(func(req llmfake.Request) llmfake.Reply {
		if isTitleRequest(req) {
			return llmfake.Reply{Text: "Ops"}
		}
		tools := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tools++
			}
			if strings.Contains(m.Content, "outcome is unknown") {
				return llmfake.Reply{Text: final}
			}
		}
		id := fmt.Sprintf("c%d", len(req.Messages))
		switch tools {
		case 0:
			return llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: id, Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}}
		case 1:
			return llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: id, Name: tool, Arguments: args}}}
		}
		return llmfake.Reply{Text: final}
	})
	return model
}

// auditCount counts audit entries of kind for tool.
func auditCount(t *testing.T, dbURL, kind, tool string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM audit WHERE kind = $1 AND tool = $2`, kind, tool).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// approvalStatuses lists each approval's status.
func approvalStatuses(t *testing.T, dbURL string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT tool || ':' || status FROM approvals ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// midApproval: a's run waits for the approval of a write when a goes
// (SIGTERM or kill -9); the click reaches b (now polling), and the approval
// is decided once, the write runs once and the run ends once, on b.
func midApproval(t *testing.T, end func(*replica)) {
	const final = "Web runs 3 replicas now."
	tg := telegramtest.New(t)
	model := toolModel(t, "scale_deployment", `{"name":"web","replicas":3}`, final)
	k8s := mcpfake.New()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, model.URL, k8s.ServeHTTP(t), telegramConfig(tg))
	dbURL := usePostgres(t, cfg)
	a := startReplica(t, dir, cfg, "a")
	waitFor(t, 15*time.Second, "replica a to take the poller lease", func() bool { return strings.Contains(a.log.String(), "lease: taken") })
	b := startReplica(t, dir, cfg, "b")
	waitFor(t, 15*time.Second, "replica b to stand by", func() bool { return strings.Contains(b.log.String(), "standing by") })

	chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")
	logChatOnFailure(t, tg, 42)
	tg.Push(tg.NewTextUpdate(chat, alice, "scale web to 3"))
	card := waitCard(t, tg, 42)
	end(a)
	waitFor(t, 30*time.Second, "replica b to poll", func() bool { return strings.Contains(b.log.String(), "receiving updates by long polling") })
	tg.Click(42, card.ID, alice, card.Buttons[0].Data)
	waitFor(t, 60*time.Second, "the answer after the approval", func() bool { return answered(tg.Messages(42), final) })
	time.Sleep(settle)
	assertAlive(t, b)

	assertDecidedAndRunOnce(t, tg, k8s, dbURL, "scale_deployment", final)
	if n := auditCount(t, dbURL, core.AuditExecuted, "scale_deployment"); n != 1 {
		t.Errorf("%d executed audit entries for scale_deployment, want 1", n)
	}
	if got := approvalStatuses(t, dbURL); len(got) != 1 || got[0] != "scale_deployment:"+string(core.ApprovalApproved) {
		t.Errorf("approvals %v, want the one scale_deployment approved", got)
	}
	auditVerify(t, dir, cfg)
}

// §16: SIGTERM of the replica whose run waits for an approval.
func TestFaultSigtermMidApproval(t *testing.T) {
	t.Parallel()
	midApproval(t, (*replica).stop)
}

// §16: kill -9 of the replica whose run waits for an approval.
func TestFaultKill9MidApproval(t *testing.T) {
	t.Parallel()
	midApproval(t, (*replica).kill9)
}

// midToolCall: an approved drain_node of seconds runs on a when a goes
// (end); the call is never run again and the conversation gets one answer
// (after kill -9: told the outcome is unknown, audited outcome_unknown).
func midToolCall(t *testing.T, seconds int, end func(*replica), unknown bool) {
	const final = "I will not drain node-7 again until someone checks it."
	tg := telegramtest.New(t)
	model := toolModel(t, "drain_node", fmt.Sprintf(`{"node":"node-7","seconds":%d}`, seconds), final)
	k8s := mcpfake.New()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, model.URL, k8s.ServeHTTP(t), telegramConfig(tg))
	dbURL := usePostgres(t, cfg)
	a := startReplica(t, dir, cfg, "a")
	waitFor(t, 15*time.Second, "replica a to take the poller lease", func() bool { return strings.Contains(a.log.String(), "lease: taken") })
	b := startReplica(t, dir, cfg, "b")
	waitFor(t, 15*time.Second, "replica b to stand by", func() bool { return strings.Contains(b.log.String(), "standing by") })

	chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")
	logChatOnFailure(t, tg, 42)
	tg.Push(tg.NewTextUpdate(chat, alice, "drain node-7"))
	card := waitCard(t, tg, 42)
	tg.Click(42, card.ID, alice, card.Buttons[0].Data)
	waitFor(t, 15*time.Second, "the drain to start", func() bool { return len(k8s.Calls()) == 1 })
	end(a)
	if unknown {
		waitFor(t, 45*time.Second, "the conversation to be told the outcome is unknown", func() bool {
			return answered(tg.Messages(42), "outcome is unknown")
		})
	}
	waitFor(t, 60*time.Second, "the answer", func() bool { return answered(tg.Messages(42), final) })
	time.Sleep(settle)
	assertAlive(t, b)

	assertDecidedAndRunOnce(t, tg, k8s, dbURL, "drain_node", final)
	wantUnknown := 0
	if unknown {
		wantUnknown = 1
	}
	if n := auditCount(t, dbURL, core.AuditOutcomeUnknown, "drain_node"); n != wantUnknown {
		t.Errorf("%d outcome_unknown audit entries for drain_node, want %d", n, wantUnknown)
	}
	auditVerify(t, dir, cfg)
}

// §16: SIGTERM of the replica running an approved write (3 s): the
// graceful shutdown lets the call and the run finish; nothing runs again.
func TestFaultSigtermMidToolCall(t *testing.T) {
	t.Parallel()
	midToolCall(t, 3, (*replica).stop, false)
}

// §16: kill -9 of the replica running an approved write (60 s): the other
// replica does not run it again; its outcome is unknown, and said so.
func TestFaultKill9MidToolCall(t *testing.T) {
	t.Parallel()
	midToolCall(t, 60, (*replica).kill9, true)
}

// tickModel answers the schedule's prompt; while slow is set, after 3 s.
func tickModel(t *testing.T) (*llmfake.Server, func(bool)) {
	model := llmfake.New(t)
	slow := make(chan bool, 1)
	slow <- true
	model.SetResponder(func(req llmfake.Request) llmfake.Reply {
		s := <-slow
		slow <- s
		if s {
			return llmfake.Reply{Text: "tock", FirstTokenDelay: 3 * time.Second}
		}
		return llmfake.Reply{Text: "tock"}
	})
	return model, func(v bool) { <-slow; slow <- v }
}

// midFire: both replicas go (end) while a fire of an "@every 4s"
// schedule runs; two new replicas fire the next one on time (not skipped
// because of the old fire), and `opsgate schedules run tick` fires at once.
// lapse is how late "on time" may be: 0 after a graceful shutdown, which
// records its fires; the hold lapse after kill -9. No fire is left running
// by a graceful stop.
func midFire(t *testing.T, end func(a, b *replica), lapse time.Duration) {
	graceful := lapse == 0
	const every = 4 * time.Second
	model, setSlow := tickModel(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, model.URL, "", "schedules:\n  - {name: tick, cron: '@every 4s', prompt: 'tick', target: log}\n")
	dbURL := usePostgres(t, cfg)
	a := startReplica(t, dir, cfg, "a")
	b := startReplica(t, dir, cfg, "b")
	waitFor(t, 30*time.Second, "a fire's run to ask the model", func() bool { return len(model.Requests()) >= 1 })
	end(a, b)
	setSlow(false)
	for _, f := range fires(t, dbURL, "tick") {
		t.Logf("fire before the restart: %s %s by %s", f.At.Format(time.TimeOnly), f.Outcome, f.By)
	}

	c := startReplica(t, dir, cfg, "c")
	d := startReplica(t, dir, cfg, "d")
	serving := time.Now()
	// The first fire time after both serve, plus the hold lapse of a fire
	// whose replica died without a word (§16); all later fires run.
	first := serving.Truncate(every).Add(every)
	due := serving.Add(lapse).Truncate(every).Add(every)
	var ran core.Fire
	waitFor(t, time.Until(due)+30*time.Second, "a fire after the restart to complete", func() bool {
		for _, f := range fires(t, dbURL, "tick") {
			if !f.At.Before(first) && f.Outcome == core.FireDone {
				ran = f
				return true
			}
		}
		return false
	})
	t.Logf("first fire done after the restart: %s (%s after the new replicas served)", ran.At.Format(time.TimeOnly), ran.At.Sub(serving).Round(time.Millisecond))
	for _, f := range fires(t, dbURL, "tick") {
		if !f.At.Before(due) && f.Outcome == core.FireSkipped {
			t.Errorf("the fire at %s was skipped after the restart", f.At.Format(time.TimeOnly))
		}
	}
	if ran.At.After(due) {
		t.Errorf("the first fire that ran after the restart was at %s; want the one at %s or earlier", ran.At.Format(time.TimeOnly), due.Format(time.TimeOnly))
	}

	// Right after a fire completed (the next is 4 s away, and runs in
	// well under a second now), so no live replica's fire is running.
	waitFor(t, 2*every, "the next fire to complete", func() bool {
		for _, f := range fires(t, dbURL, "tick") {
			if f.At.After(ran.At) && f.Outcome == core.FireDone {
				return true
			}
		}
		return false
	})
	began := time.Now()
	stdout, stderr, code := runBinary(t, dir, "", "schedules", "run", "tick", "--config", cfg)
	if code != 0 {
		t.Errorf("schedules run tick: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("schedules run tick: exit %d after %s", code, time.Since(began).Round(time.Millisecond))
	c.stop()
	d.stop()

	seen := map[time.Time]int{}
	for _, f := range fires(t, dbURL, "tick") {
		if seen[f.At]++; seen[f.At] > 1 {
			t.Errorf("the fire at %s is in the ledger twice", f.At)
		}
		if f.Outcome == core.FireRunning && (graceful || !f.At.Before(first)) {
			t.Errorf("the fire at %s (by %s) is still running after every replica stopped gracefully", f.At.Format(time.TimeOnly), f.By)
		}
	}
	auditVerify(t, dir, cfg)
}

// §16: SIGTERM of both replicas right after a fire: the graceful shutdown
// records the fire, and new replicas fire the next one on time.
func TestFaultSchedulesAfterRollingRestart(t *testing.T) {
	t.Parallel()
	midFire(t, func(a, b *replica) {
		// Both at once; stop sends SIGTERM and waits.
		syscall.Kill(b.pid, syscall.SIGTERM)
		a.stop()
		select {
		case <-b.done:
		case <-time.After(40 * time.Second):
			t.Fatalf("replica b did not stop on SIGTERM:\n%s", b.log.String())
		}
	}, 0)
}

// §16: kill -9 of both replicas mid-fire: the dead replica's fire stops
// blocking later fires within the hold lapse (15 s), not after an hour.
func TestFaultKill9MidFire(t *testing.T) {
	t.Parallel()
	midFire(t, func(a, b *replica) {
		a.kill9()
		b.kill9()
	}, 15*time.Second)
}

// assertDecidedAndRunOnce checks what every approval fault promises: the
// tool ran once at the tool server, its approval was decided once, and
// chat 42 got the final answer once with at most one retry note.
func assertDecidedAndRunOnce(t *testing.T, tg *telegramtest.Server, k8s *mcpfake.Fixture, dbURL, tool, final string) {
	t.Helper()
	if n := len(k8s.Calls()); n != 1 {
		t.Errorf("%s ran %d times, want once: %+v", tool, n, k8s.Calls())
	}
	if n := count(tg.Messages(42), final); n != 1 {
		t.Errorf("the message was answered %d times, want once", n)
	}
	if n := retryNotes(tg.Messages(42)); n > 1 {
		t.Errorf("%d retry notes, want at most one", n)
	}
	if n := auditCount(t, dbURL, core.AuditApproved, tool); n != 1 {
		t.Errorf("%d approved audit entries for %s, want 1 (decided once)", n, tool)
	}
}
