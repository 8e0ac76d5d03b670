package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/incident"
	"github.com/opsgate/opsgate/core/timeline"
	"github.com/opsgate/opsgate/internal/config"
)

// drill is an incident played through serve with the Slack fake: an alert
// fires, a triage run reads the pods, alice asks for a write that bob
// approves, and the alert resolves. It returns the config, the
// conversation's key and the Slack fake (serve stopped).
type drill struct {
	cfg, key, root string
	sl             *slacktest.Server
	model          *llmfake.Server
	serve          *served
}

// runDrill plays the drill. The alert is recorded as an alert intake
// records it (core.Engine.Note: alert.fired and alert.resolved events of
// the conversation).
func runDrill(t *testing.T, extraModel ...llmfake.Reply) *drill {
	t.Helper()
	dir := t.TempDir()
	sl := slacktest.New(t)
	sl.AddUser("U0PAGER", "pager")
	sl.AddUser("U0ALICE", "alice")
	sl.AddUser("U0BOB", "bob")
	model := llmfake.New(t)
	k8s := mcpfake.New()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(`
people:
  pager: {slack: U0PAGER}
  alice: {slack: U0ALICE}
  bob:   {slack: U0BOB}
roles:
  admin: [bob]
rules:
  - name: scaling-needs-bob
    match: {server: k8s, tool: scale_deployment}
    action: ask
    approvers: [bob]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, model.URL, k8s.ServeHTTP(t), fmt.Sprintf(
		"policy:\n  file: %s\nslack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n",
		pol, slacktest.BotToken, slacktest.AppToken, sl.APIURL()))
	model.Push(
		toolCall("t1", "get_pods", `{"namespace":"prod"}`),
		llmfake.Reply{Text: "web-1 is crash looping in prod.\nI would scale web to 3."},
		toolCall("c0", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		toolCall("c1", "scale_deployment", `{"name":"web","replicas":3}`),
		llmfake.Reply{Text: "Web runs 3 replicas now."},
	)
	model.Push(extraModel...)
	s := serveConfig(t, cfg)
	sl.WaitConnected(t)

	root, ev := sl.Mention("C0OPS", "U0PAGER", "Triage this alert: HighErrorRate severity=critical namespace=prod", "")
	key := "slack:" + slacktest.TeamID + ":C0OPS:" + root
	startsAt := time.Now().UTC().Add(-2 * time.Minute).Truncate(time.Second)
	note(t, cfg, key, core.Event{Type: core.EventAlertFired, Alert: &core.AlertInfo{Name: "HighErrorRate", Severity: "critical",
		Summary: "5xx above 5% on web", Receiver: "ops", StartsAt: startsAt, Labels: map[string]string{"namespace": "prod"}}})
	sl.SendEvent(t, ev)
	sl.Eventually(t, "the triage answer", func() bool { return threadHas(sl, root, "crash looping") })

	_, ev = sl.Say("C0OPS", "U0ALICE", "scale web to 3", root)
	sl.SendEvent(t, ev)
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
	sl.SendClick(t, sl.Click("U0BOB", "bob", card, approve))
	sl.Eventually(t, "the answer after the write", func() bool { return threadHas(sl, root, "Web runs 3 replicas now.") })
	note(t, cfg, key, core.Event{Type: core.EventAlertResolved, Alert: &core.AlertInfo{Name: "HighErrorRate", Severity: "critical",
		Summary: "5xx above 5% on web", Receiver: "ops", StartsAt: startsAt, EndsAt: time.Now().UTC()}})
	if calls := k8s.Calls(); len(calls) != 2 || calls[1].Tool != "scale_deployment" {
		t.Fatalf("the MCP server ran %+v, want get_pods then scale_deployment", calls)
	}
	return &drill{cfg: cfg, key: key, root: root, sl: sl, model: model, serve: s}
}

// note records ev in conversation key as an alert intake does: with the
// next sequence numbers of the conversation, in the store serve uses.
func note(t *testing.T, cfgFile, key string, ev core.Event) {
	t.Helper()
	cfg, err := config.Load(cfgFile, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := openStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	seq, err := store.ReserveSeq(ctx, key, 1)
	if err != nil {
		t.Fatal(err)
	}
	ev.ConvKey, ev.Seq, ev.Time = key, seq, time.Now().UTC()
	if err := store.AppendEvents(ctx, []core.Event{ev}); err != nil {
		t.Fatal(err)
	}
}

func threadHas(sl *slacktest.Server, root, text string) bool {
	for _, m := range sl.Messages("C0OPS", root, nil) {
		if strings.Contains(m.Plain(), text) {
			return true
		}
	}
	return false
}

// Issue 24, acceptance 7: the report of a drill (alert, triage, a person,
// an approved write, resolve) prints each step in order with its UTC time
// and actor, under a header; --format json is stable (a golden file, with
// times, ids and durations masked).
func TestIncidentReportOfADrill(t *testing.T) {
	d := runDrill(t)
	d.serve.stop(t)

	code, md, errOut := runMain(t, testEnv(), "incident", "report", d.key, "--config", d.cfg)
	if code != 0 {
		t.Fatalf("incident report: %d\n%s\n%s", code, md, errOut)
	}
	t.Logf("report:\n%s", md)
	mustContain(t, "the header", md, "# Incident report: ", "- Conversation: "+d.key, "Duration: ", "- People: @pager, @alice, @bob",
		"- Changes made: k8s/scale_deployment (ok, approved by @bob)", "- Approvals: 1 asked, 1 approved, 0 denied, 0 other")
	step := func(actor, text string) string {
		return `\| ` + regexp.QuoteMeta(actor) + ` \| [^|]*` + regexp.QuoteMeta(text)
	}
	var wants []string
	for _, w := range [][2]string{
		{"Alertmanager ops", "fired: HighErrorRate (critical): 5xx above 5% on web"},
		{"@pager", "Triage this alert: HighErrorRate severity=critical namespace=prod"},
		{"@pager", "k8s/get_pods (read) ok in "},
		{"opsgate", "web-1 is crash looping in prod."},
		{"@alice", "scale web to 3"},
		{"@alice", "asked bob to approve k8s/scale_deployment (write)"},
		{"@bob", "approved k8s/scale_deployment by @bob"},
		{"@bob", "k8s/scale_deployment (write) ok in "},
		{"opsgate", "Web runs 3 replicas now."},
		{"Alertmanager ops", "resolved: HighErrorRate (critical)"},
	} {
		wants = append(wants, step(w[0], w[1]))
	}
	re := regexp.MustCompile(`(?s)` + strings.Join(wants, ".*"))
	if !re.MatchString(md) {
		t.Errorf("the report does not show the drill's steps in order with their actors:\n%s", md)
	}
	rowTime := regexp.MustCompile(`(?m)^\| (\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ) \|`)
	rows := rowTime.FindAllStringSubmatch(md, -1)
	if len(rows) != len(wants) {
		t.Errorf("%d steps, want %d", len(rows), len(wants))
	}
	for i := 1; i < len(rows); i++ {
		if rows[i][1] < rows[i-1][1] {
			t.Errorf("step %d at %s comes after a later step (%s)", i+1, rows[i][1], rows[i-1][1])
		}
	}

	code, js, errOut := runMain(t, testEnv(), "incident", "report", d.key, "--format", "json", "--config", d.cfg)
	if code != 0 {
		t.Fatalf("incident report --format json: %d\n%s", code, errOut)
	}
	var tl timeline.Timeline
	if err := json.Unmarshal([]byte(js), &tl); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, js)
	}
	for i, s := range tl.Steps {
		if s.Time.Location() != time.UTC || (i > 0 && s.Time.Before(tl.Steps[i-1].Time)) {
			t.Errorf("step %d: time %s is not UTC or not in order", i, s.Time)
		}
	}
	got := maskReport(js, d.key)
	golden := filepath.Join("testdata", "incident-report.golden.json")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("incident report --format json differs from %s (go test ./cmd/opsgate -run %s -update):\n%s", golden, t.Name(), got)
	}

	code, _, errOut = runMain(t, testEnv(), "incident", "report", "slack:T0TEST:C0OPS:nope", "--config", d.cfg)
	if code != exitError || !strings.Contains(errOut, `no conversation "slack:T0TEST:C0OPS:nope"`) {
		t.Errorf("a missing conversation: %d %q, want 1 and its name", code, errOut)
	}
	code, _, errOut = runMain(t, testEnv(), "incident", "report", d.key, "--format", "yaml", "--config", d.cfg)
	if code != exitUsage || !strings.Contains(errOut, "want md or json") {
		t.Errorf("a bad format: %d %q, want 2 and the formats", code, errOut)
	}

	// incident postmortem: the same draft as /postmortem, from the CLI.
	d.model.Push(llmfake.Reply{Text: postmortemDraft})
	code, out, errOut := runMain(t, testEnv("USER", "sre"), "incident", "postmortem", d.key, "--config", d.cfg)
	if code != 0 {
		t.Fatalf("incident postmortem: %d\n%s\n%s", code, out, errOut)
	}
	mustInOrder(t, out, "# Postmortem: HighErrorRate ", "## What was changed", "approved by @bob",
		"Saved as a postmortem draft: `postmortems/postmortem-higherrorrate-")
	reqs := d.model.Requests()
	if asked := reqs[len(reqs)-1].Messages; len(asked) != 2 || !strings.Contains(asked[1].Content, "| @alice | 💬 scale web to 3 |") {
		t.Errorf("the model was not given the timeline: %+v", asked)
	}
	code, out, _ = runMain(t, testEnv(), "memory", "list", "--type", "postmortem", "--config", d.cfg)
	mustContain(t, "memory list", out, "postmortems/postmortem-higherrorrate-", "channel:slack:T0TEST:C0OPS", "agent_draft")
	if code != 0 {
		t.Errorf("memory list: %d", code)
	}
}

// maskReport replaces what differs between runs of the drill (times, ids,
// durations, the thread's ts) so that the golden file holds the format.
func maskReport(js, key string) string {
	js = strings.ReplaceAll(js, key, "slack:T0TEST:C0OPS:<ts>")
	for re, with := range map[*regexp.Regexp]string{
		regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+Z"`):     `"<time>"`,
		regexp.MustCompile(`"duration_ms": \d+`):              `"duration_ms": "<ms>"`,
		regexp.MustCompile(`"(run_id|approval_id)": "[^"]+"`): `"$1": "<id>"`,
		regexp.MustCompile(` in [0-9.]+(ns|µs|ms|s)"`):        ` in <duration>"`,
	} {
		js = re.ReplaceAllString(js, with)
	}
	return js
}

// postmortemDraft is the model's postmortem in the tests.
const postmortemDraft = `## Summary
HighErrorRate fired for web in prod: web-1 was crash looping.
## Impact
5xx above 5% on web for about two minutes.
## Timeline
- the alert fired; the triage found web-1 crash looping
## What was changed
- k8s/scale_deployment web to 3 replicas, approved by @bob
## Open questions
- why web-1 crash looped
## Follow-ups
- alert on web-1 restarts before HighErrorRate fires`

// Issue 24, acceptance 8: /postmortem posts a draft and keeps it as a
// postmortem draft (agent_draft, the channel's memory); once an admin
// promotes it with the promotion card, the next alert of the same kind
// gets it in its triage run's memory context.
func TestPostmortemDraftPromotedReachesTheNextTriage(t *testing.T) {
	d := runDrill(t)
	sl := d.sl
	var mu sync.Mutex
	script := []llmfake.Reply{
		{Text: postmortemDraft},
		toolCall("m0", "load_toolset", `{"toolset":"memory"}`),
		// the path is the one the reply below names
		{},
		{Text: "I proposed the postmortem for the workspace."},
		{Text: "web-1 crash loops again; the postmortem of the last HighErrorRate says scaling web to 3 helped."},
	}
	var pmPath string
	d.model.SetResponder(func(req llmfake.Request) llmfake.Reply {
		if isTitleRequest(req) {
			return llmfake.Reply{Text: "HighErrorRate on web"}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(script) == 0 {
			return llmfake.Reply{Text: "nothing scripted"}
		}
		r := script[0]
		script = script[1:]
		if r.Text == "" && r.ToolCalls == nil {
			r = toolCall("m1", "memory_propose_promotion", `{"path":"`+pmPath+`","reason":"the lesson of this HighErrorRate applies to the next"}`)
		}
		return r
	})

	// /postmortem in the incident's thread.
	_, ev := sl.Mention("C0OPS", "U0ALICE", "/postmortem", d.root)
	sl.SendEvent(t, ev)
	var reply string
	sl.Eventually(t, "the postmortem draft", func() bool {
		for _, m := range sl.Messages("C0OPS", d.root, nil) {
			if strings.Contains(m.Plain(), "Saved as a postmortem draft") {
				reply = m.Plain()
				return true
			}
		}
		return false
	})
	mustContain(t, "the draft", reply, "Postmortem: HighErrorRate", "What was changed", "approved by @bob", "(channel memory, agent_draft")
	pm := regexp.MustCompile(`postmortems/[a-z0-9-]+\.md`).FindString(reply)
	if pm == "" {
		t.Fatalf("the reply names no path:\n%s", reply)
	}
	mu.Lock()
	pmPath = pm
	mu.Unlock()
	reqs := d.model.Requests()
	ask := reqs[len(reqs)-1]
	if len(ask.Messages) != 2 || !strings.Contains(ask.Messages[0].Content, "blameless postmortem") ||
		!strings.Contains(ask.Messages[1].Content, "approved k8s/scale_deployment by @bob") ||
		!strings.Contains(ask.Messages[1].Content, "fired: HighErrorRate") {
		t.Errorf("the model was not asked from the timeline: %+v", ask.Messages)
	}

	// An admin promotes it with the existing card.
	_, ev = sl.Say("C0OPS", "U0BOB", "propose "+pm+" for the whole workspace", d.root)
	sl.SendEvent(t, ev)
	var card slacktest.Message
	sl.Eventually(t, "the promotion card", func() bool {
		for _, m := range sl.Messages("C0OPS", d.root, nil) {
			if _, ok := m.Button("promote"); ok {
				card = m
				return true
			}
		}
		return false
	})
	promote, _ := card.Button("promote")
	sl.SendClick(t, sl.Click("U0BOB", "bob", card, promote))
	sl.Eventually(t, "the promotion", func() bool {
		m, _ := sl.Message(card.Channel, card.TS)
		return strings.Contains(m.Plain(), "Promoted by @bob")
	})

	// The next alert of the same kind: its triage run sees the postmortem
	// as trusted memory.
	before := len(d.model.Requests())
	root2, ev := sl.Mention("C0OPS", "U0PAGER", "Triage this alert: HighErrorRate severity=critical namespace=prod", "")
	sl.SendEvent(t, ev)
	sl.Eventually(t, "the second triage", func() bool { return threadHas(sl, root2, "crash loops again") })
	d.serve.stop(t)
	var triage llmfake.Request
	for _, r := range d.model.Requests()[before:] {
		if !isTitleRequest(r) {
			triage = r
			break
		}
	}
	var memory string
	for _, m := range triage.Messages {
		if m.Role == "system" && strings.Contains(m.Content, "<memory_context>") {
			memory = m.Content
		}
	}
	if !strings.Contains(memory, "crash looping") || !strings.Contains(memory, "Postmortem: HighErrorRate") {
		t.Errorf("the next triage's memory context lacks the postmortem:\n%s", memory)
	}

	code, out, errOut := runMain(t, testEnv(), "memory", "show", pm, "--config", d.cfg)
	if code != 0 {
		t.Fatalf("memory show: %d\n%s\n%s", code, out, errOut)
	}
	mustInOrder(t, out, "scope:    workspace", "type:     postmortem", "trust:    admin_approved", "history:", "  v1 ", "postmortem drafted", "  v2 ", "promoted by")
}

// /timeline in chat posts the short timeline on Slack, Telegram and
// Discord: each platform passes the command to the engine, which answers
// it without a run.
func TestTimelineCommandInEveryChat(t *testing.T) {
	c := newConsoleServe(t, []string{"slack", "telegram", "discord"},
		llmfake.Reply{Text: "Slack: all pods Running."},
		llmfake.Reply{Text: "Telegram: all pods Running."},
		llmfake.Reply{Text: "Discord: all pods Running."})
	short := func(platform string) []string {
		return []string{"Timeline", "People: ", "💬 ", "are the pods ok on " + platform}
	}

	root, ev := c.sl.Mention("C0OPS", aliceSlack, "are the pods ok on slack?", "")
	c.sl.SendEvent(t, ev)
	c.sl.Eventually(t, "the Slack answer", func() bool { return threadHas(c.sl, root, "Slack: all pods Running.") })
	_, ev = c.sl.Mention("C0OPS", aliceSlack, "/timeline", root)
	c.sl.SendEvent(t, ev)
	c.sl.Eventually(t, "the Slack timeline", func() bool { return threadHas(c.sl, root, "Timeline") })
	for _, m := range c.sl.Messages("C0OPS", root, nil) {
		if strings.Contains(m.Plain(), "Timeline") {
			mustContain(t, "the Slack timeline", m.Plain(), short("slack")...)
		}
	}

	alice := telegramtest.User(aliceTGID, "alice")
	at := "@" + telegramtest.BotUsername + " "
	c.tg.Push(c.tg.NewTextUpdate(telegramtest.GroupChat(consoleTGChat), alice, at+"are the pods ok on telegram?"))
	tgMessage(t, c.tg, consoleTGChat, "the Telegram answer", c.s.log, func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "Telegram: all pods Running.")
	})
	c.tg.Push(c.tg.NewTextUpdate(telegramtest.GroupChat(consoleTGChat), alice, "/timeline@"+telegramtest.BotUsername))
	m := tgMessage(t, c.tg, consoleTGChat, "the Telegram timeline", c.s.log, func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "Timeline")
	})
	mustContain(t, "the Telegram timeline", m.Visible, short("telegram")...)

	msg, err := c.dc.Say(consoleChannel, aliceDiscord, c.dc.Mention()+" are the pods ok on discord?")
	if err != nil {
		t.Fatal(err)
	}
	dcHas := func(text string) (string, bool) {
		for _, m := range c.dc.Messages(msg.ID) {
			if strings.Contains(m.Content, text) {
				return m.Content, true
			}
		}
		return "", false
	}
	if !c.dc.Wait(30*time.Second, func() bool { _, ok := dcHas("Discord: all pods Running."); return ok }) {
		t.Fatalf("no Discord answer; log:\n%s", c.s.log.String())
	}
	if _, err := c.dc.Say(msg.ID, aliceDiscord, "/timeline"); err != nil {
		t.Fatal(err)
	}
	var got string
	if !c.dc.Wait(30*time.Second, func() bool { var ok bool; got, ok = dcHas("Timeline"); return ok }) {
		t.Fatalf("no Discord timeline; thread: %+v", c.dc.Messages(msg.ID))
	}
	mustContain(t, "the Discord timeline", got, short("discord")...)
	if n := len(c.model.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3: /timeline asks no model", n)
	}

	// The console's timeline view of the Slack thread, from its page.
	b := c.console()
	b.Navigate(c.s.base + "/#/c/" + url.PathEscape("slack:"+slacktest.TeamID+":C0OPS:"+root))
	b.Click("#timeline-link")
	b.WaitText("#timeline-rows", "are the pods ok on slack?")
	b.WaitText("#timeline-rows", "Slack: all pods Running.")
	b.WaitText("#timeline-head", "People: @alice")
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the console logged errors: %q", errs)
	}
}

// An incident's timeline takes its alerts from the intake's record, by
// the incident's key or by its chat thread's.
func TestIncidentTimelineAlertsFromTheRecord(t *testing.T) {
	cfg, err := config.Load(writeConfig(t, t.TempDir(), "http://127.0.0.1:1/v1", "", ""), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := openStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t0 := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	k := incident.Known{Fingerprint: "f1", Status: "resolved", Labels: map[string]string{"alertname": "HighErrorRate", "severity": "critical"},
		Annotations: map[string]string{"description": "5xx above 5%"}, StartsAt: t0, EndsAt: t0.Add(20 * time.Minute)}
	if _, err := store.(incident.Store).SaveIncident(ctx, incident.Record{Key: "incident:abc", GroupKey: "{}:{}", Seq: 1, Receiver: "ops",
		Thread: "slack:T0TEST:C0OPS:1.2", Status: "resolved", Alerts: []incident.Known{k}, OpenedAt: t0, UpdatedAt: t0,
		History: []incident.Change{
			{Kind: incident.ChangeFired, Fingerprint: "f1", Alert: "HighErrorRate", At: t0, Received: t0.Add(time.Second)},
			{Kind: incident.ChangeResolved, Fingerprint: "f1", Alert: "HighErrorRate", At: k.EndsAt, Received: k.EndsAt.Add(time.Second)},
		}}); err != nil {
		t.Fatal(err)
	}
	src, _ := timelineSource(store)
	for _, key := range []string{"incident:abc", "slack:T0TEST:C0OPS:1.2"} {
		tl, err := timeline.Build(ctx, src, key, "")
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		var got []string
		for _, s := range tl.Steps {
			got = append(got, s.Time.Format(time.TimeOnly)+" "+s.Actor+" "+s.Text)
		}
		want := "03:00:00 Alertmanager ops fired: HighErrorRate (critical): 5xx above 5%\n03:20:00 Alertmanager ops resolved: HighErrorRate (critical): 5xx above 5%"
		if strings.Join(got, "\n") != want {
			t.Errorf("%s:\n%s\nwant:\n%s", key, strings.Join(got, "\n"), want)
		}
	}
	if tl, err := timeline.Build(ctx, src, "slack:T0TEST:C0OPS:9.9", ""); err != timeline.ErrEmpty || len(tl.Steps) != 0 {
		t.Errorf("another conversation: %+v, %v; want nothing", tl.Steps, err)
	}
}

// /timeline and /postmortem in the terminal: the engine answers them like
// the memory commands, the postmortem once the model has drafted it.
func TestTimelineAndPostmortemInTheTerminal(t *testing.T) {
	dir := t.TempDir()
	model := llmfake.New(t)
	model.Push(llmfake.Reply{Text: "All pods are Running."}, llmfake.Reply{Text: postmortemDraft})
	cfg := writeConfig(t, dir, model.URL, "", "")
	stdout, stderr, code := chatRun(t, cfg, "are the pods ok?\n/timeline\n/postmortem\n")
	if code != 0 {
		t.Fatalf("chat: code %d\n%s\n%s", code, stdout, stderr)
	}
	mustInOrder(t, stdout, "All pods are Running.", "Timeline", "💬 ", "are the pods ok?", "Postmortem: ", "## What was changed",
		"Saved as a postmortem draft: `postmortems/")
	if n := len(model.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2 (the answer, the draft)", n)
	}
}
