package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/core/incident"
	"github.com/opsgate/opsgate/internal/amtest"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// The tests of issue 24 (items 1–6) run a real Alertmanager
// (internal/amtest) that delivers to serve's real /hooks/alertmanager, and
// the honest chat fakes.

// crashLooping is the alert the tests fire.
func crashLooping(pod string) amtest.Alert {
	return amtest.Alert{
		Labels: map[string]string{"alertname": "KubePodCrashLooping", "severity": "critical", "namespace": "payments", "pod": pod},
		Annotations: map[string]string{
			"summary":     "Pod payments/" + pod + " is crash looping",
			"description": "The pod restarted 5 times in 10 minutes.",
		},
		GeneratorURL: "http://prometheus.example/graph?g0.expr=kube_pod_restarts",
	}
}

// triageModel answers every triage run with a text naming the run's
// number, and anything else with "noted"; it records every request.
func triageModel(t *testing.T) *llmfake.Server {
	model := llmfake.New(t)
	var mu sync.Mutex
	n := 0
	model.SetResponder(func(req llmfake.Request) llmfake.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "user" && strings.Contains(last.Content, "Alertmanager receiver") {
			mu.Lock()
			n++
			defer mu.Unlock()
			return llmfake.Reply{Text: fmt.Sprintf("Triage %d: payments/api restarts on OOM; I would raise its memory limit.", n)}
		}
		return llmfake.Reply{Text: "noted"}
	})
	return model
}

// triageRequests are the model requests that started a triage.
func triageRequests(model *llmfake.Server) []llmfake.Request {
	var out []llmfake.Request
	for _, req := range model.Requests() {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "user" && strings.Contains(last.Content, "Alertmanager receiver") {
			out = append(out, req)
		}
	}
	return out
}

// incidentRig is serve with Slack, incidents to slack:C0OPS, and a real
// Alertmanager posting to its hook with a hook token.
type incidentRig struct {
	dir, cfg string
	sl       *slacktest.Server
	model    *llmfake.Server
	s        *served
	am       *amtest.Alertmanager
	hook     string // a token with scope hook
}

func newIncidentRig(t *testing.T, model *llmfake.Server, mcpURL, extra string, am amtest.Config) *incidentRig {
	t.Helper()
	if _, err := amtest.Find(); err != nil {
		amtest.Start(t, am) // skips (fails under CI) with the message
	}
	r := &incidentRig{dir: t.TempDir(), sl: slacktest.New(t), model: model}
	r.cfg = writeConfig(t, r.dir, model.URL, mcpURL, fmt.Sprintf(
		"slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n%s",
		slacktest.BotToken, slacktest.AppToken, r.sl.APIURL(), extra))
	r.hook, _ = createScopedToken(t, r.cfg, "alertmanager", "--scope", "hook")
	r.s = serveConfig(t, r.cfg)
	r.sl.WaitConnected(t)
	am.WebhookURL, am.Token = r.s.base+httpapi.HookAlertmanager, r.hook
	r.am = amtest.Start(t, am)
	t.Cleanup(func() {
		if t.Failed() {
			for _, req := range r.model.Requests() {
				t.Logf("model request: %q", req.Messages[len(req.Messages)-1].Content)
			}
			t.Logf("serve log:\n%s", r.s.log.String())
			for _, root := range r.sl.Messages("C0OPS", "", nil) {
				t.Logf("ROOT %s %q", root.TS, root.Text)
				for _, m := range r.sl.Messages("C0OPS", root.TS, nil) {
					t.Logf("  MSG %s user=%s bot=%s %q", m.TS, m.User, m.BotID, m.Plain())
				}
			}
		}
	})
	return r
}

// roots are the incident roots posted in channel.
func (r *incidentRig) roots(channel string) []slacktest.Message {
	return r.sl.Messages(channel, "", func(m slacktest.Message) bool { return strings.Contains(m.Text, "KubePodCrashLooping") })
}

// store opens the rig's SQLite store beside serve.
func (r *incidentRig) store(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(r.dir, "data", "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// incidentOf is the incident shown in the Slack thread of root.
func (r *incidentRig) incidentOf(t *testing.T, channel string, root slacktest.Message) incident.Record {
	t.Helper()
	st := r.store(t)
	var rec incident.Record
	// The root is posted a moment before its thread is recorded.
	waitFor(t, 10*time.Second, "the incident of the thread of "+root.TS, func() bool {
		got, ok, err := st.IncidentByThread(context.Background(), slackThread(channel, root.TS))
		if err != nil {
			t.Fatal(err)
		}
		rec = got
		return ok
	})
	return rec
}

func slackThread(channel, ts string) string {
	return "slack:" + slacktest.TeamID + ":" + channel + ":" + ts
}

const incidentsTo = "incidents:\n  targets:\n    - match: {severity: critical}\n      to: slack:C0OPS\n"

// Issue 24, item 1: a critical alert opens one Slack thread whose root
// names the alert, its severity and summary; the triage run answers in
// it, in conversation incident:<hash>, requested by alertmanager:opsgate;
// the model saw the alert's labels and annotations.
func TestAlertOpensOneSlackThreadAndTriagesIt(t *testing.T) {
	model := triageModel(t)
	r := newIncidentRig(t, model, "", incidentsTo+"      triage: Find out why the pod restarts.\n", amtest.Config{})
	r.am.Fire(crashLooping("api"))

	var root slacktest.Message
	r.sl.Eventually(t, "the incident's root in C0OPS", func() bool {
		roots := r.roots("C0OPS")
		if len(roots) > 0 {
			root = roots[0]
		}
		return len(roots) > 0
	})
	mustContain(t, "the root", root.Text, "KubePodCrashLooping", "severity critical", "Summary: Pod payments/api is crash looping",
		"Description: The pod restarted 5 times in 10 minutes.", "Firing: 1 of 1", "Started: ", "Source: http://prometheus.example/graph")
	r.sl.Eventually(t, "the triage answer in the thread", func() bool {
		for _, m := range r.sl.BotReplies("C0OPS", root.TS) {
			if strings.Contains(m.Plain(), "Triage 1: payments/api restarts on OOM") {
				return true
			}
		}
		return false
	})
	reqs := triageRequests(model)
	if len(reqs) != 1 {
		t.Fatalf("%d triage requests, want 1", len(reqs))
	}
	msg := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	mustContain(t, "the triage message the model saw", msg, "Find out why the pod restarts.",
		"labels: alertname=KubePodCrashLooping, namespace=payments, pod=api, severity=critical",
		"summary: Pod payments/api is crash looping", "description: The pod restarted 5 times in 10 minutes.")

	rec := r.incidentOf(t, "C0OPS", root)
	if !strings.HasPrefix(rec.Key, "incident:") || rec.Status != incident.Firing || rec.To != "slack:C0OPS" {
		t.Errorf("incident %+v", rec)
	}
	runs, err := r.store(t).ConversationRuns(context.Background(), rec.Key)
	if err != nil || len(runs) != 1 || runs[0].Requester.ID != "alertmanager:opsgate" {
		t.Fatalf("runs of %s = %+v, %v; want one triage run by alertmanager:opsgate", rec.Key, runs, err)
	}
	if roots := r.roots("C0OPS"); len(roots) != 1 {
		t.Errorf("%d roots, want 1", len(roots))
	}
}

// Issue 24, item 2: over three repeat intervals the group gets no second
// thread and no second triage, only root updates; a second alert joining
// the group is posted in the same thread.
func TestRepeatedNotificationsUpdateTheRootAndAJoinerIsPostedInTheThread(t *testing.T) {
	model := triageModel(t)
	r := newIncidentRig(t, model, "", incidentsTo, amtest.Config{})
	r.am.Fire(crashLooping("api"))
	var root slacktest.Message
	r.sl.Eventually(t, "the incident's root", func() bool {
		roots := r.roots("C0OPS")
		if len(roots) > 0 {
			root = roots[0]
		}
		return len(roots) > 0
	})
	rec := r.incidentOf(t, "C0OPS", root)
	// Repeats come about every 6 s (repeat_interval 4s on group_interval
	// 2s ticks): wait for three of them.
	waitFor(t, 60*time.Second, "three repeat notifications", func() bool {
		got, _, _ := r.store(t).Incident(context.Background(), rec.Key)
		return got.Notifications >= 4
	})
	r.sl.Eventually(t, "the root to count the notifications", func() bool {
		m, _ := r.sl.Message("C0OPS", root.TS)
		return strings.Contains(m.Text, "notifications: 4") || strings.Contains(m.Text, "notifications: 5")
	})
	r.am.Fire(crashLooping("worker"))
	r.sl.Eventually(t, "the joining alert in the thread", func() bool {
		for _, m := range r.sl.BotReplies("C0OPS", root.TS) {
			if strings.Contains(m.Plain(), "New alert in this group") && strings.Contains(m.Plain(), "pod=worker") {
				return true
			}
		}
		return false
	})
	r.sl.Eventually(t, "the root to count two alerts", func() bool {
		m, _ := r.sl.Message("C0OPS", root.TS)
		return strings.Contains(m.Text, "Firing: 2 of 2")
	})
	if roots := r.roots("C0OPS"); len(roots) != 1 {
		t.Errorf("%d roots after the repeats and a joiner, want 1", len(roots))
	}
	if n := len(triageRequests(model)); n != 1 {
		t.Errorf("%d triage runs, want 1", n)
	}
}

// Issue 24, item 3: a person's message in the incident thread (no
// mention) is answered there, in the incident conversation; the write it
// leads to asks the target's approvers: a platform approver who is not
// one is refused, the target's approver approves and the tool runs.
func TestPersonInIncidentThreadIsAnsweredAndApprovalGoesToTheTargetsApprovers(t *testing.T) {
	model := triageModel(t)
	k8s := mcpfake.New()
	r := newIncidentRig(t, model, k8s.ServeHTTP(t),
		"  approvers: [U0DAVE]\n"+incidentsTo+"      approvers: ['slack:U0BOB']\n      toolsets: [k8s]\n", amtest.Config{})
	r.sl.AddUser("U0CAROL", "carol")
	r.sl.AddUser("U0DAVE", "dave")
	r.sl.AddUser("U0BOB", "bob")
	r.am.Fire(crashLooping("api"))
	var root slacktest.Message
	r.sl.Eventually(t, "the triage answer", func() bool {
		roots := r.roots("C0OPS")
		if len(roots) == 0 {
			return false
		}
		root = roots[0]
		for _, m := range r.sl.BotReplies("C0OPS", root.TS) {
			if strings.Contains(m.Plain(), "Triage 1") {
				return true
			}
		}
		return false
	})
	rec := r.incidentOf(t, "C0OPS", root)

	model.SetResponder(func(req llmfake.Request) llmfake.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "scale web"):
			return llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c0", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}}
		case last.Role == "tool" && last.ToolCallID == "c0":
			return llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "scale_deployment", Arguments: `{"name":"web","replicas":3}`}}}
		case last.Role == "tool":
			return llmfake.Reply{Text: "Scaled web to 3."}
		}
		return llmfake.Reply{Text: "noted"}
	})
	_, ev := r.sl.Say("C0OPS", "U0CAROL", "please scale web to 3", root.TS)
	r.sl.SendEvent(t, ev)

	var card slacktest.Message
	r.sl.Eventually(t, "the approval card in the thread", func() bool {
		for _, m := range r.sl.Messages("C0OPS", root.TS, nil) {
			if _, ok := m.Button("approve"); ok {
				card = m
				return true
			}
		}
		return false
	})
	// The person's message went to the incident conversation, which has
	// the alert in its transcript.
	msgs, err := r.store(t).Messages(context.Background(), rec.Key)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range msgs {
		found = found || m.Role == core.RoleUser && strings.Contains(m.Content, "please scale web to 3")
	}
	if !found {
		t.Fatalf("carol's message is not in %s: %+v", rec.Key, msgs)
	}
	approve, _ := card.Button("approve")
	r.sl.SendClick(t, r.sl.Click("U0DAVE", "dave", card, approve))
	r.sl.Eventually(t, "dave's refusal", func() bool { return len(r.sl.Ephemerals("U0DAVE")) > 0 })
	if got := r.sl.Ephemerals("U0DAVE")[0].Text; !strings.Contains(got, "bob") && !strings.Contains(got, "U0BOB") {
		t.Errorf("dave's refusal does not name the target's approver: %q", got)
	}
	if n := len(k8s.Calls()); n != 0 {
		t.Fatalf("the tool ran after a click by a platform approver who is not the target's")
	}
	r.sl.SendClick(t, r.sl.Click("U0BOB", "bob", card, approve))
	waitFor(t, 30*time.Second, "the tool to run", func() bool { return len(k8s.Calls()) > 0 })
	r.sl.Eventually(t, "the answer in the thread", func() bool {
		for _, m := range r.sl.BotReplies("C0OPS", root.TS) {
			if strings.Contains(m.Plain(), "Scaled web to 3.") {
				return true
			}
		}
		return false
	})
	if roots := r.roots("C0OPS"); len(roots) != 1 {
		t.Errorf("%d roots, want 1", len(roots))
	}
}

// Issue 24, item 4: the group resolves: "✅ resolved after …" in the
// thread and the root marked resolved; a new firing after retrigger_after
// opens a new incident (a second thread, a second triage).
func TestResolveIsPostedAndALaterFiringOpensANewIncident(t *testing.T) {
	model := triageModel(t)
	r := newIncidentRig(t, model, "", incidentsTo+"  retrigger_after: 3s\n", amtest.Config{})
	a := crashLooping("api")
	r.am.Fire(a)
	var root slacktest.Message
	r.sl.Eventually(t, "the triage answer", func() bool {
		roots := r.roots("C0OPS")
		if len(roots) == 0 {
			return false
		}
		root = roots[0]
		return len(r.sl.BotReplies("C0OPS", root.TS)) > 0
	})
	first := r.incidentOf(t, "C0OPS", root)
	r.am.Resolve(a)
	r.sl.Eventually(t, "✅ resolved after … in the thread", func() bool {
		for _, m := range r.sl.BotReplies("C0OPS", root.TS) {
			if strings.HasPrefix(m.Plain(), "✅ resolved after ") {
				return true
			}
		}
		return false
	})
	r.sl.Eventually(t, "the root marked resolved", func() bool {
		m, _ := r.sl.Message("C0OPS", root.TS)
		return strings.HasPrefix(m.Text, "✅ RESOLVED: KubePodCrashLooping") && strings.Contains(m.Text, "resolved after")
	})
	// retrigger_after (3 s) has passed since the triage: a new firing of
	// the same group is a new incident.
	time.Sleep(3 * time.Second)
	r.am.Fire(crashLooping("api"))
	r.sl.Eventually(t, "a second incident's root", func() bool { return len(r.roots("C0OPS")) == 2 })
	second := r.roots("C0OPS")[1]
	rec := r.incidentOf(t, "C0OPS", second)
	if rec.Key == first.Key || rec.GroupKey != first.GroupKey || rec.Seq != 2 {
		t.Errorf("second incident %s (group %s, seq %d); first %s", rec.Key, rec.GroupKey, rec.Seq, first.Key)
	}
	waitFor(t, 30*time.Second, "the second triage", func() bool { return len(triageRequests(model)) == 2 })
}

// Issue 24, item 6: bad input to the hook — no token 401, a token without
// hook 403, 2 MB 413, version "3" 400 — posts nothing and stores nothing;
// neither does a group no target matches, which is acknowledged and logged.
func TestAlertmanagerHookRefusesBadInputAndKeepsNothing(t *testing.T) {
	model := triageModel(t)
	dir := t.TempDir()
	sl := slacktest.New(t)
	cfg := writeConfig(t, dir, model.URL, "", fmt.Sprintf(
		"slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n%s",
		slacktest.BotToken, slacktest.AppToken, sl.APIURL(), incidentsTo))
	hook, _ := createScopedToken(t, cfg, "alertmanager", "--scope", "hook")
	api, _ := createScopedToken(t, cfg, "alice", "--scope", "read,write,approve,admin")
	s := serveConfig(t, cfg)
	sl.WaitConnected(t)
	valid := `{"version":"4","groupKey":"{}:{alertname=\"KubePodCrashLooping\"}","status":"firing","receiver":"opsgate",` +
		`"alerts":[{"status":"firing","labels":{"alertname":"KubePodCrashLooping","severity":"critical"},"startsAt":"2026-11-28T04:00:00Z","fingerprint":"abc"}]}`
	big := `{"version":"4","pad":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, tc := range []struct {
		name, token, body string
		status            int
		code              string
	}{
		{"no token", "", valid, http.StatusUnauthorized, "unauthorized"},
		{"unknown token", "og_nope", valid, http.StatusUnauthorized, "unauthorized"},
		{"token without hook", api, valid, http.StatusForbidden, "insufficient_scope"},
		{"2 MB", hook, big, http.StatusRequestEntityTooLarge, "too_large"},
		{"wrong version", hook, strings.Replace(valid, `"version":"4"`, `"version":"3"`, 1), http.StatusBadRequest, "bad_notification"},
		{"not JSON", hook, `{"version":"4",`, http.StatusBadRequest, "bad_notification"},
		{"no alerts", hook, `{"version":"4","groupKey":"g","status":"firing","alerts":[]}`, http.StatusBadRequest, "bad_notification"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, s.base+httpapi.HookAlertmanager, bytes.NewReader([]byte(tc.body)))
			req.Header.Set("Content-Type", "application/json")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(b.String(), `"code":"`+tc.code+`"`) {
				t.Errorf("POST %s = %d %s, want %d %s", tc.name, resp.StatusCode, b.String(), tc.status, tc.code)
			}
		})
	}
	// A group no target matches is acknowledged (200) and logged, and
	// starts nothing either.
	warning := strings.ReplaceAll(valid, `"severity":"critical"`, `"severity":"warning"`)
	req, _ := http.NewRequest(http.MethodPost, s.base+httpapi.HookAlertmanager, strings.NewReader(warning))
	req.Header.Set("Authorization", "Bearer "+hook)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("POST an unmatched group = %v, %v; want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	waitLog(t, s.log, s.done, regexp.MustCompile(`alert group matches no incidents target; acknowledged`))
	// A wrong method is no notification either.
	if _, code := get(t, s.base+httpapi.HookAlertmanager); code != http.StatusMethodNotAllowed {
		t.Errorf("GET the hook = %d, want 405", code)
	}
	time.Sleep(500 * time.Millisecond) // anything wrongly started would show by now
	if calls := sl.Calls("chat.postMessage"); len(calls) != 0 {
		t.Errorf("Slack got %d posts after bad input, want none: %+v", len(calls), calls)
	}
	if n := len(model.Requests()); n != 0 {
		t.Errorf("the model got %d requests, want none", n)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "data", "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok, err := st.LatestIncident(context.Background(), `{}:{alertname="KubePodCrashLooping"}`); ok || err != nil {
		t.Errorf("an incident was stored after bad input (%v)", err)
	}
	convs, err := st.Conversations(context.Background(), core.ConversationFilter{KeyPrefix: incident.KeyPrefix})
	if err != nil || len(convs) != 0 {
		t.Errorf("incident conversations after bad input: %+v, %v", convs, err)
	}
}

// chatIncidentRig is serve with one chat fake given in extra (no Slack),
// incidents to `to`, and a real Alertmanager posting to its hook.
func chatIncidentRig(t *testing.T, model *llmfake.Server, extra, to string) (*served, string) {
	t.Helper()
	if _, err := amtest.Find(); err != nil {
		amtest.Start(t, amtest.Config{}) // skips (fails under CI) with the message
	}
	dir := t.TempDir()
	cfg := writeConfig(t, dir, model.URL, "", extra+"incidents:\n  targets:\n    - {match: {severity: critical}, to: '"+to+"'}\n")
	hook, _ := createScopedToken(t, cfg, "alertmanager", "--scope", "hook")
	s := serveConfig(t, cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve log:\n%s", s.log.String())
		}
	})
	return s, hook
}

// Issue 24, item 5 (Discord): the incident is a thread on a root message
// in the target channel; the triage answers in the thread, and a person's
// message there (no mention) is answered there, in the incident
// conversation.
func TestIncidentOnDiscordIsAThread(t *testing.T) {
	const guild, channel = "1200000000000000001", "1300000000000000001"
	model := triageModel(t)
	dc := discordtest.New(t, discordtest.WithHeartbeat(500*time.Millisecond))
	dc.AddChannel(guild, channel, "alerts")
	alice := discordtest.User{ID: "1400000000000000001", Name: "alice"}
	s, hook := chatIncidentRig(t, model, fmt.Sprintf(
		"discord:\n  token: %s\n  application_id: %q\n  api_url: %s\n  guilds: [%q]\n  channels: [%q]\n  allowed_users: [%q]\n",
		dc.Token, dc.AppID, dc.URL, guild, channel, alice.ID), "discord:"+channel)
	if !dc.Wait(20*time.Second, dc.Connected) {
		t.Fatal("the Discord adapter did not connect")
	}
	am := amtest.Start(t, amtest.Config{WebhookURL: s.base + httpapi.HookAlertmanager, Token: hook})
	am.Fire(crashLooping("api"))

	var root discordtest.Message
	found := dc.Wait(30*time.Second, func() bool {
		for _, m := range dc.Messages(channel) {
			if strings.Contains(m.Content, "KubePodCrashLooping") && m.Thread != "" {
				root = m
				return true
			}
		}
		return false
	})
	if !found {
		t.Fatalf("no incident root with a thread in the channel: %+v", dc.Messages(channel))
	}
	mustContain(t, "the root", root.Content, "severity critical", "Summary: Pod payments/api is crash looping")
	answered := func(text string) func() bool {
		return func() bool {
			for _, m := range dc.Messages(root.Thread) {
				if m.Author.ID == dc.Bot.ID && strings.Contains(m.Content, text) {
					return true
				}
			}
			return false
		}
	}
	if !dc.Wait(30*time.Second, answered("Triage 1: payments/api restarts on OOM")) {
		t.Fatalf("no triage answer in the thread: %+v", dc.Messages(root.Thread))
	}
	if _, err := dc.Say(root.Thread, alice, "is the node out of memory too?"); err != nil {
		t.Fatal(err)
	}
	if !dc.Wait(30*time.Second, answered("noted")) {
		t.Fatalf("alice's message in the thread was not answered there: %+v", dc.Messages(root.Thread))
	}
	last := model.Requests()[len(model.Requests())-1]
	if !strings.Contains(last.Messages[len(last.Messages)-1].Content, "is the node out of memory too?") ||
		!strings.Contains(fmt.Sprint(last.Messages), "Alertmanager receiver") {
		t.Errorf("alice's message did not continue the incident conversation (the triage is not in its transcript)")
	}
	if n := len(dc.Threads(channel)); n != 1 {
		t.Errorf("%d threads, want 1", n)
	}
}

// Issue 24, item 5 (Telegram): the incident is a message in the chat; the
// triage answers as a reply to it, and a person's reply to it is answered
// there, in the incident conversation.
func TestIncidentOnTelegramIsAMessageAndItsReplies(t *testing.T) {
	const chatID, aliceID = int64(-100777), int64(4242)
	model := triageModel(t)
	tg := telegramtest.New(t)
	s, hook := chatIncidentRig(t, model, fmt.Sprintf("telegram:\n  token: %q\n  api_url: %s\n  allowed_users: [%d]\n",
		telegramtest.Token, tg.URL, aliceID), fmt.Sprintf("telegram:%d", chatID))
	am := amtest.Start(t, amtest.Config{WebhookURL: s.base + httpapi.HookAlertmanager, Token: hook})
	am.Fire(crashLooping("api"))

	var root telegramtest.Message
	waitFor(t, 30*time.Second, "the incident's message in the chat", func() bool {
		for _, m := range tg.Messages(chatID) {
			if strings.Contains(m.Visible, "KubePodCrashLooping") {
				root = m
				return true
			}
		}
		return false
	})
	mustContain(t, "the root", root.Visible, "severity critical", "Summary: Pod payments/api is crash looping")
	// replyTo is the message a bot message with text replies to (0: none).
	replyTo := func(text string) (int, bool) {
		for _, c := range tg.CallsTo("sendMessage", chatID) {
			if c.Code == http.StatusOK && strings.Contains(c.Params.Get("text"), text) {
				id, _ := strconv.Atoi(c.Params.Get("reply_to_message_id"))
				return id, true
			}
		}
		return 0, false
	}
	waitFor(t, 30*time.Second, "the triage answer", func() bool { _, ok := replyTo("Triage 1"); return ok })
	if id, _ := replyTo("Triage 1"); id != root.ID {
		t.Errorf("the triage answer replies to message %d, want the incident's %d", id, root.ID)
	}
	u := tg.NewTextUpdate(telegramtest.GroupChat(chatID), &tgbotapi.User{ID: aliceID, FirstName: "Alice"}, "is the node out of memory too?")
	u.Message.ReplyToMessage = &tgbotapi.Message{MessageID: root.ID, From: &tgbotapi.User{ID: 123456, IsBot: true}, Chat: u.Message.Chat}
	tg.Push(u)
	waitFor(t, 30*time.Second, "the answer to alice's reply", func() bool { _, ok := replyTo("noted"); return ok })
	if id, _ := replyTo("noted"); id != root.ID {
		t.Errorf("the answer to alice replies to message %d, want the incident's %d", id, root.ID)
	}
	last := model.Requests()[len(model.Requests())-1]
	if !strings.Contains(last.Messages[len(last.Messages)-1].Content, "is the node out of memory too?") ||
		!strings.Contains(fmt.Sprint(last.Messages), "Alertmanager receiver") {
		t.Errorf("alice's reply did not continue the incident conversation (the triage is not in its transcript)")
	}
}

// Issue 24: incidents live in the store, shared by replicas. Two replicas
// on one PostgreSQL both get every notification (two webhook_configs):
// one root, one thread, one triage over several repeats; after one
// replica is killed, the other goes on in the same thread.
func TestTwoReplicasOnPostgresOpenOneIncident(t *testing.T) {
	if _, err := amtest.Find(); err != nil {
		amtest.Start(t, amtest.Config{})
	}
	dir := t.TempDir()
	sl := slacktest.New(t)
	model := triageModel(t)
	cfg := writeConfig(t, dir, model.URL, "", fmt.Sprintf(
		"slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n%s",
		slacktest.BotToken, slacktest.AppToken, sl.APIURL(), incidentsTo))
	url := usePostgres(t, cfg)
	hook, _ := createScopedToken(t, cfg, "alertmanager", "--scope", "hook")
	a := startReplica(t, dir, cfg, "a")
	b := startReplica(t, dir, cfg, "b")
	addr := func(r *replica) string {
		m := regexp.MustCompile(`msg="opsgate serving".* addr=(\S+)`).FindStringSubmatch(r.log.String())
		return "http://" + m[1] + httpapi.HookAlertmanager
	}
	am := amtest.Start(t, amtest.Config{WebhookURL: addr(a), MoreWebhookURLs: []string{addr(b)}, Token: hook})
	am.Fire(crashLooping("api"))

	store, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	roots := func() []slacktest.Message {
		return sl.Messages("C0OPS", "", func(m slacktest.Message) bool { return strings.Contains(m.Text, "KubePodCrashLooping") })
	}
	sl.Eventually(t, "the incident's root", func() bool { return len(roots()) > 0 })
	root := roots()[0]
	var rec incident.Record
	waitFor(t, 60*time.Second, "three rounds of notifications to both replicas", func() bool {
		got, ok, err := store.IncidentByThread(context.Background(), slackThread("C0OPS", root.TS))
		if err != nil {
			t.Fatal(err)
		}
		rec = got
		return ok && got.Notifications >= 6
	})
	if n := len(roots()); n != 1 {
		t.Errorf("%d roots from two replicas, want 1", n)
	}
	if n := len(triageRequests(model)); n != 1 {
		t.Errorf("%d triage runs from two replicas, want 1", n)
	}
	// One replica dies; the other keeps the incident.
	syscall.Kill(a.pid, syscall.SIGKILL)
	am.Fire(crashLooping("worker"))
	sl.Eventually(t, "the joining alert in the thread", func() bool {
		n := 0
		for _, m := range sl.BotReplies("C0OPS", root.TS) {
			if strings.Contains(m.Plain(), "pod=worker") {
				n++
			}
		}
		return n == 1
	})
	b.stop()
	if n := len(roots()); n != 1 {
		t.Errorf("%d roots, want 1", n)
	}
	n := 0
	for _, m := range sl.BotReplies("C0OPS", root.TS) {
		if strings.Contains(m.Plain(), "pod=worker") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the joining alert was posted %d times, want once", n)
	}
	if got, _, _ := store.Incident(context.Background(), rec.Key); len(got.Alerts) != 2 || got.Seq != 1 {
		t.Errorf("incident after the join: %d alerts, seq %d", len(got.Alerts), got.Seq)
	}
}
