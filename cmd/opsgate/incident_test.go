package main

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/incident"
	"github.com/opsgate/opsgate/core/timeline"
	"github.com/opsgate/opsgate/internal/amtest"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/internal/golden"
)

// drill is an incident played through a real Alertmanager, serve's
// /hooks/alertmanager and the Slack fake (newIncidentRig): the alert
// fires, the triage run reads the pods, alice asks for a write that bob
// (the target's approver) approves, and the alert resolves.
type drill struct {
	*incidentRig
	k8s  *mcpfake.Fixture
	root string          // the thread's root ts
	rec  incident.Record // the incident
	// pmPath is the postmortem the model proposes (set by the test).
	pmPath atomic.Value
}

// drillModel answers a drill's requests by what they are.
func (d *drill) answer(req llmfake.Request) llmfake.Reply {
	first, last := req.Messages[0], req.Messages[len(req.Messages)-1]
	switch {
	case isTitleRequest(req):
		return llmfake.Reply{Text: "payments/api crash looping"}
	case strings.Contains(first.Content, "blameless postmortem"):
		return llmfake.Reply{Text: postmortemDraft}
	case last.Role == "user" && strings.Contains(last.Content, "Alertmanager receiver"):
		return toolCall("t1", "get_pods", `{"namespace":"payments"}`)
	case last.Role == "tool" && last.ToolCallID == "t1":
		return llmfake.Reply{Text: "payments/api is crash looping on OOM.\nI would scale web to 3."}
	case last.Role == "user" && strings.Contains(last.Content, "scale web to 3"):
		return toolCall("c0", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`)
	case last.Role == "tool" && last.ToolCallID == "c0":
		return toolCall("c1", "scale_deployment", `{"name":"web","replicas":3}`)
	case last.Role == "tool" && last.ToolCallID == "c1":
		return llmfake.Reply{Text: "Web runs 3 replicas now."}
	case last.Role == "user" && strings.Contains(last.Content, "for the whole workspace"):
		return toolCall("m0", "load_toolset", `{"toolset":"memory"}`)
	case last.Role == "tool" && last.ToolCallID == "m0":
		p, _ := d.pmPath.Load().(string)
		return toolCall("m1", "memory_propose_promotion", `{"path":"`+p+`","reason":"the lesson of this alert applies to the next"}`)
	case last.Role == "tool" && last.ToolCallID == "m1":
		return llmfake.Reply{Text: "I proposed the postmortem for the workspace."}
	}
	return llmfake.Reply{Text: "noted"}
}

// runDrill plays the drill up to the resolve.
func runDrill(t *testing.T) *drill {
	t.Helper()
	d := &drill{k8s: mcpfake.New()}
	model := llmfake.New(t)
	model.SetResponder(d.answer)
	d.incidentRig = newIncidentRig(t, model, d.k8s.ServeHTTP(t),
		"  approvers: [U0BOB]\n"+incidentsTo+"      approvers: ['slack:U0BOB']\n      toolsets: [k8s]\n  retrigger_after: 2s\n", amtest.Config{})
	d.sl.AddUser("U0ALICE", "alice")
	d.sl.AddUser("U0BOB", "bob")
	alert := crashLooping("api")
	d.am.Fire(alert)
	d.sl.Eventually(t, "the triage answer", func() bool {
		roots := d.roots("C0OPS")
		if len(roots) == 0 {
			return false
		}
		d.root = roots[0].TS
		return threadHas(d.sl, d.root, "crash looping on OOM")
	})
	d.rec = d.incidentOf(t, "C0OPS", slacktest.Message{TS: d.root})

	_, ev := d.sl.Say("C0OPS", "U0ALICE", "scale web to 3", d.root)
	d.sl.SendEvent(t, ev)
	var card slacktest.Message
	d.sl.Eventually(t, "the approval card", func() bool {
		for _, m := range d.sl.Messages("C0OPS", d.root, nil) {
			if _, ok := m.Button("approve"); ok {
				card = m
				return true
			}
		}
		return false
	})
	approve, _ := card.Button("approve")
	d.sl.SendClick(t, d.sl.Click("U0BOB", "bob", card, approve))
	d.sl.Eventually(t, "the answer after the write", func() bool { return threadHas(d.sl, d.root, "Web runs 3 replicas now.") })
	d.am.Resolve(alert)
	d.sl.Eventually(t, "the resolve in the thread", func() bool { return threadHas(d.sl, d.root, "✅ resolved after ") })
	waitFor(t, 10*time.Second, "the resolve in the incident's record", func() bool {
		rec, _, err := d.store(t).Incident(context.Background(), d.rec.Key)
		return err == nil && rec.Status == incident.Resolved
	})
	if calls := d.k8s.Calls(); len(calls) != 2 || calls[1].Tool != "scale_deployment" {
		t.Fatalf("the MCP server ran %+v, want get_pods then scale_deployment", calls)
	}
	return d
}

// triages are the requests that started a triage run (the title request
// quotes the triage message too).
func triages(model *llmfake.Server) []llmfake.Request {
	var out []llmfake.Request
	for _, r := range triageRequests(model) {
		if !isTitleRequest(r) {
			out = append(out, r)
		}
	}
	return out
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
	key := d.rec.Key

	// /timeline in the incident's thread: the short form, alerts included.
	_, ev := d.sl.Mention("C0OPS", "U0ALICE", "/timeline", d.root)
	d.sl.SendEvent(t, ev)
	d.sl.Eventually(t, "the timeline in the thread", func() bool { return threadHas(d.sl, d.root, "Timeline") })
	for _, m := range d.sl.BotReplies("C0OPS", d.root) {
		if strings.Contains(m.Plain(), "Timeline") {
			mustInOrder(t, m.Plain(), "Changes made: k8s/scale_deployment (ok, approved by @bob)", "fired: KubePodCrashLooping (critical)",
				"@alice: scale web to 3", "@bob: approved k8s/scale_deployment by @bob", "resolved: KubePodCrashLooping")
		}
	}
	d.s.stop(t)

	code, md, errOut := runMain(t, testEnv(), "incident", "report", key, "--config", d.cfg)
	if code != 0 {
		t.Fatalf("incident report: %d\n%s\n%s", code, md, errOut)
	}
	t.Logf("report:\n%s", md)
	mustContain(t, "the header", md, "# Incident report: ", "- Conversation: "+key, "Duration: ", "- People: @alice, @bob",
		"- Changes made: k8s/scale_deployment (ok, approved by @bob)", "- Approvals: 1 asked, 1 approved, 0 denied, 0 other")
	step := func(actor, text string) string {
		return `\| ` + regexp.QuoteMeta(actor) + ` \| [^|]*` + regexp.QuoteMeta(text)
	}
	var wants []string
	for _, w := range [][2]string{
		{"Alertmanager opsgate", "🔥 fired: KubePodCrashLooping (critical): Pod payments/api is crash looping"},
		{"Alertmanager opsgate", "💬 "},
		{"Alertmanager opsgate", "k8s/get_pods (read) ok in "},
		{"opsgate", "payments/api is crash looping on OOM."},
		{"@alice", "scale web to 3"},
		{"@alice", "asked to approve k8s/scale_deployment (write)"},
		{"@bob", "approved k8s/scale_deployment by @bob"},
		{"@bob", "k8s/scale_deployment (write) ok in "},
		{"opsgate", "Web runs 3 replicas now."},
		{"Alertmanager opsgate", "✅ resolved: KubePodCrashLooping (critical)"},
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

	code, js, errOut := runMain(t, testEnv(), "incident", "report", key, "--format", "json", "--config", d.cfg)
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
	if a := tl.Steps[0].Alert; a == nil || a.StartsAt.IsZero() || a.ReceivedAt.Before(a.StartsAt) {
		t.Errorf("the alert step keeps when it started and when opsgate received it: %+v", a)
	}
	got := maskReport(js, key)
	golden.Check(t, filepath.Join("testdata", "incident-report.golden.json"), []byte(got))

	code, _, errOut = runMain(t, testEnv(), "incident", "report", "incident:nope", "--config", d.cfg)
	if code != exitError || !strings.Contains(errOut, `no conversation "incident:nope"`) {
		t.Errorf("a missing conversation: %d %q, want 1 and its name", code, errOut)
	}
	code, _, errOut = runMain(t, testEnv(), "incident", "report", key, "--format", "yaml", "--config", d.cfg)
	if code != exitUsage || !strings.Contains(errOut, "want md or json") {
		t.Errorf("a bad format: %d %q, want 2 and the formats", code, errOut)
	}

	// incident postmortem: the same draft as /postmortem, from the CLI.
	code, out, errOut := runMain(t, testEnv("USER", "sre"), "incident", "postmortem", key, "--config", d.cfg)
	if code != 0 {
		t.Fatalf("incident postmortem: %d\n%s\n%s", code, out, errOut)
	}
	mustInOrder(t, out, "# Postmortem: KubePodCrashLooping ", "## What was changed", "approved by @bob",
		"Saved as a postmortem draft: `postmortems/postmortem-kubepodcrashlooping-")
	reqs := d.model.Requests()
	if asked := reqs[len(reqs)-1].Messages; len(asked) != 2 || !strings.Contains(asked[1].Content, "| @alice | 💬 scale web to 3 |") {
		t.Errorf("the model was not given the timeline: %+v", asked)
	}
	code, out, _ = runMain(t, testEnv(), "memory", "list", "--type", "postmortem", "--config", d.cfg)
	mustContain(t, "memory list", out, "postmortems/postmortem-kubepodcrashlooping-", "channel:"+key, "agent_draft")
	if code != 0 {
		t.Errorf("memory list: %d", code)
	}
}

// maskReport replaces what differs between runs of the drill (times, ids,
// durations, the incident's key) so that the golden file holds the format.
func maskReport(js, key string) string {
	js = strings.ReplaceAll(js, key, "incident:<hash>")
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
KubePodCrashLooping fired for payments/api: the pod was crash looping on OOM.
## Impact
payments/api restarted 5 times in 10 minutes.
## Timeline
- the alert fired; the triage found payments/api crash looping on OOM
## What was changed
- k8s/scale_deployment web to 3 replicas, approved by @bob
## Open questions
- why payments/api ran out of memory
## Follow-ups
- raise the memory limit of payments/api`

// Issue 24, acceptance 8: /postmortem in the incident's thread posts a
// draft and keeps it as a postmortem draft (agent_draft, the incident's
// channel); once an admin promotes it with the promotion card, the next
// alert of the same kind gets it in its triage run's memory context.
func TestPostmortemDraftPromotedReachesTheNextTriage(t *testing.T) {
	d := runDrill(t)
	sl := d.sl

	_, ev := sl.Mention("C0OPS", "U0ALICE", "/postmortem", d.root)
	sl.SendEvent(t, ev)
	var reply string
	sl.Eventually(t, "the postmortem draft", func() bool {
		for _, m := range sl.BotReplies("C0OPS", d.root) {
			if strings.Contains(m.Plain(), "Saved as a postmortem draft") {
				reply = m.Plain()
				return true
			}
		}
		return false
	})
	mustContain(t, "the draft", reply, "Postmortem: KubePodCrashLooping", "What was changed", "approved by @bob", "(channel memory, agent_draft")
	pm := regexp.MustCompile(`postmortems/[a-z0-9-]+\.md`).FindString(reply)
	if pm == "" {
		t.Fatalf("the reply names no path:\n%s", reply)
	}
	d.pmPath.Store(pm)
	var asked llmfake.Request
	for _, r := range d.model.Requests() {
		if strings.Contains(r.Messages[0].Content, "blameless postmortem") {
			asked = r
		}
	}
	if len(asked.Messages) != 2 || !strings.Contains(asked.Messages[1].Content, "approved k8s/scale_deployment by @bob") ||
		!strings.Contains(asked.Messages[1].Content, "fired: KubePodCrashLooping") {
		t.Errorf("the model was not asked from the timeline: %+v", asked.Messages)
	}

	// bob, an admin (the platform's approver), promotes it with the card.
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

	// The same alert fires again after retrigger_after: a new incident,
	// whose triage run sees the postmortem as trusted memory.
	time.Sleep(2 * time.Second)
	d.am.Fire(crashLooping("api"))
	waitFor(t, 60*time.Second, "the second triage", func() bool { return len(triages(d.model)) == 2 })
	if roots := d.roots("C0OPS"); len(roots) != 2 {
		t.Errorf("%d incident roots, want 2", len(roots))
	}
	d.s.stop(t)
	var memory string
	for _, m := range triages(d.model)[1].Messages {
		if m.Role == "system" && strings.Contains(m.Content, "<memory_context>") {
			memory = m.Content
		}
	}
	if !strings.Contains(memory, "Postmortem: KubePodCrashLooping") || !strings.Contains(memory, "raise the memory limit of payments/api") {
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
	// Click once the conversation has loaded, as a person would: a click
	// while its transcript is still arriving can land where the link was.
	b.WaitText("#timeline", "Slack: all pods Running.")
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
	src, _ := timeline.FromStore(store)
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
