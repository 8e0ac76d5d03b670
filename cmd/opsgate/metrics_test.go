package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// readmeMetrics reads the metrics table of the README: name -> type.
func readmeMetrics(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(opsgate_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\|")
	out := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	if len(out) < 10 {
		t.Fatalf("found %d metrics in the README's table; is the table still there?", len(out))
	}
	return out
}

// scraper scrapes /metrics, checks every opsgate family against the
// README, and remembers each documented family's total (the sum of its
// values, or of its histograms' counts; 0 while absent, as a labelled
// counter is before its first event) at every scrape.
type scraper struct {
	t          *testing.T
	s          *served
	documented map[string]string
	totals     map[string][]float64
	present    map[string]bool
	last       map[string]*dto.MetricFamily
}

func (sc *scraper) scrape() map[string]*dto.MetricFamily {
	sc.t.Helper()
	resp, err := http.Get(sc.s.base + "/metrics")
	if err != nil {
		sc.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		sc.t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		sc.t.Fatalf("/metrics does not parse: %v", err)
	}
	for name, f := range fams {
		if !strings.HasPrefix(name, "opsgate_") {
			continue
		}
		typ, ok := sc.documented[name]
		if !ok && !sc.present[name] {
			sc.t.Errorf("%s is exported but not in the README's table", name)
		} else if want := strings.ToLower(f.GetType().String()); ok && typ != want && !sc.present[name] {
			sc.t.Errorf("%s is a %s, the README says %s", name, want, typ)
		}
		sc.present[name] = true
	}
	for name := range sc.documented {
		total := 0.0
		for _, m := range fams[name].GetMetric() {
			total += value(m)
		}
		sc.totals[name] = append(sc.totals[name], total)
	}
	sc.last = fams
	return fams
}

// value is a counter's or gauge's value, or a histogram's count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// get returns the value of the series of name with the labels (pairs of
// name and value), and whether there is one.
func (sc *scraper) get(name string, labels ...string) (float64, bool) {
	f := sc.last[name]
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && have[labels[i]] == labels[i+1]
		}
		if match {
			return value(m), true
		}
	}
	return 0, false
}

// wait scrapes until the series' value satisfies cond.
func (sc *scraper) wait(what string, cond func(float64) bool, name string, labels ...string) float64 {
	sc.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		sc.scrape()
		v, ok := sc.get(name, labels...)
		if ok && cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			sc.t.Fatalf("%s: %s%v = %v (present: %v) after 30 s\nlog:\n%s", what, name, labels, v, ok, sc.s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func is(want float64) func(float64) bool   { return func(v float64) bool { return v == want } }
func above(min float64) func(float64) bool { return func(v float64) bool { return v > min } }

// Issue 9 acceptance 6: each metric named in the README is present and
// moves in a test that exercises it (scrape and parse with the Prometheus
// text parser). The README's table is the list: a metric documented but
// not exported, exported but not documented, of another type, or that
// this scenario does not move, fails the test.
func TestMetricsInReadmeMove(t *testing.T) {
	documented := readmeMetrics(t)
	dir := t.TempDir()
	tg := telegramtest.New(t)
	llm := llmfake.New(t)
	mcp := mcpfake.New()
	// A second MCP server that cannot start, loaded by default: it fails
	// at the first run and must not make the replica unready.
	extra := "    - name: broken\n      command: " + filepath.Join(dir, "no-such-mcp-server") + "\n" +
		"  default_toolsets: [k8s, broken]\n" + telegramConfig(tg)
	cfg := writeConfig(t, dir, llm.URL, mcp.ServeHTTP(t), extra)

	before := time.Now()
	s := serveConfig(t, cfg)
	after := time.Now()
	sc := &scraper{t: t, s: s, documented: documented, totals: map[string][]float64{}, present: map[string]bool{}}
	sc.scrape()

	// What does not move: the build and the start.
	if v, ok := sc.get("opsgate_build_info", "version", "dev"); !ok || v != 1 {
		t.Errorf("opsgate_build_info{version=dev} = %v, %v; want 1", v, ok)
	}
	if v, _ := sc.get("opsgate_start_time_seconds"); v < float64(before.Unix()-1) || v > float64(after.Unix()+1) {
		t.Errorf("opsgate_start_time_seconds = %v, want between %d and %d", v, before.Unix(), after.Unix())
	}
	// A single process on SQLite is always alive: the liveness gauge
	// moves with PostgreSQL (TestReadyzAndGaugeSayLivenessLostWhilePostgresIsDown).
	if v, _ := sc.get("opsgate_replica_liveness"); v != 1 {
		t.Errorf("opsgate_replica_liveness = %v, want 1", v)
	}
	static := []string{"opsgate_build_info", "opsgate_start_time_seconds", "opsgate_replica_liveness"}

	sc.wait("Telegram connected", is(1), "opsgate_adapter_up", "adapter", "telegram")
	for _, n := range []string{"k8s", "broken"} {
		if v, ok := sc.get("opsgate_mcp_server_up", "server", n); !ok || v != 0 {
			t.Errorf("opsgate_mcp_server_up{server=%s} before any use = %v, %v; want 0", n, v, ok)
		}
	}

	// An approval of a bot that is no longer configured (another replica's
	// store, an older configuration) expires: a decision this process
	// settles, whose event no adapter can show.
	orphan(t, filepath.Join(dir, "data", "opsgate.db"))
	sc.wait("the orphan expired", is(1), "opsgate_approval_decisions_total", "outcome", "expired")
	sc.wait("its event undeliverable", is(1), "opsgate_event_send_errors_total")
	sc.wait("nothing pending", is(0), "opsgate_approvals_pending")

	// Run 1: a 429 from the model (retried), a read tool, a 429 from
	// Telegram, and an answer held back while the run is active.
	hold := make(chan struct{})
	llm.Push(
		llmfake.Reply{Status: http.StatusTooManyRequests, RetryAfter: "1"},
		toolCall("c1", "get_pods", `{"namespace":"prod"}`),
		llmfake.Reply{Text: "All 3 pods in prod are Running.", Hold: hold},
	)
	tg.RateLimit("sendMessage", 42, 1)
	alice := telegramtest.User(42, "alice")
	chat := telegramtest.PrivateChat(42)
	tg.SendText(chat, alice, "how is prod?")
	llm.WaitRequests(3, 30*time.Second)
	sc.wait("a run in progress", is(1), "opsgate_active_runs")
	close(hold)
	sc.wait("run 1 done", is(1), "opsgate_runs_total", "status", "done")
	sc.wait("no run in progress", is(0), "opsgate_active_runs")
	sc.wait("Telegram's 429", is(1), "opsgate_platform_rate_limited_total", "platform", "telegram", "endpoint", "sendMessage")
	sc.wait("the answer posted", above(0), "opsgate_platform_api_calls_total", "platform", "telegram", "endpoint", "sendMessage", "code", "200")
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"opsgate_model_errors_total", []string{"kind", "rate_limit"}, 1},
		{"opsgate_model_errors_total", []string{"kind", "workflow.error"}, 0},
		{"opsgate_tool_calls_total", []string{"server", "k8s", "tool", "get_pods", "outcome", "ok"}, 1},
		{"opsgate_tool_call_duration_seconds", []string{"server", "k8s", "tool", "get_pods"}, 1},
		// The final answer's; a 429 and a reply of tool calls only stream no token.
		{"opsgate_model_time_to_first_token_seconds", nil, 1},
		{"opsgate_run_duration_seconds", []string{"status", "done"}, 1},
		{"opsgate_mcp_server_up", []string{"server", "k8s"}, 1},
		{"opsgate_mcp_server_failed", []string{"server", "k8s"}, 0},
		{"opsgate_mcp_server_up", []string{"server", "broken"}, 0},
		{"opsgate_mcp_server_failed", []string{"server", "broken"}, 1},
		{"opsgate_platform_api_calls_total", []string{"platform", "telegram", "endpoint", "getUpdates", "code", "200"}, -1},
	} {
		v, ok := sc.get(c.name, c.labels...)
		if !ok || (c.want >= 0 && v != c.want) || (c.want < 0 && v <= 0) {
			t.Errorf("after run 1: %s%v = %v (present: %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if _, rep := s.readyz(t); !rep.Ready || rep.component(t, "tools:broken").OK || !rep.component(t, "tools:broken").Optional {
		t.Errorf("/readyz with a failed MCP server: %+v; want ready, with tools:broken failing as optional", rep)
	}

	// Run 2: a write tool waits for approval; a click by someone who may
	// not decide is refused, the requester's approves.
	llm.Push(
		toolCall("c2", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		toolCall("c3", "scale_deployment", `{"name":"web","replicas":3}`),
		llmfake.Reply{Text: "Scaled web to 3 replicas."},
	)
	tg.SendText(chat, alice, "scale web to 3")
	sc.wait("run 2 paused", is(1), "opsgate_runs_total", "status", "awaiting_approval")
	sc.wait("its request pending", is(1), "opsgate_approvals_pending")
	sc.wait("waiting for a while", above(0), "opsgate_approvals_oldest_pending_seconds")
	card := waitCard(t, tg, 42)
	tg.Click(42, card.ID, telegramtest.User(43, "mallory"), card.Buttons[0].Data)
	sc.wait("mallory refused", is(1), "opsgate_approval_clicks_total", "result", "not_allowed")
	tg.Click(42, card.ID, alice, card.Buttons[0].Data)
	sc.wait("alice approved", is(1), "opsgate_approval_clicks_total", "result", "ok")
	sc.wait("approved", is(1), "opsgate_approval_decisions_total", "outcome", "approved")
	sc.wait("run 2 done", is(2), "opsgate_runs_total", "status", "done")
	sc.wait("nothing pending", is(0), "opsgate_approvals_pending")
	sc.wait("no wait", is(0), "opsgate_approvals_oldest_pending_seconds")
	sc.wait("the write tool ran", is(1), "opsgate_tool_calls_total", "server", "k8s", "tool", "scale_deployment", "outcome", "ok")
	sc.wait("the built-in tool ran", is(1), "opsgate_tool_calls_total", "server", "opsgate", "tool", "load_toolset", "outcome", "ok")

	// Telegram goes away and comes back.
	tg.Outage()
	sc.wait("Telegram down", is(0), "opsgate_adapter_up", "adapter", "telegram")
	sc.wait("its 502s counted", above(0), "opsgate_platform_api_calls_total", "platform", "telegram", "endpoint", "getUpdates", "code", "502")
	tg.Restore()
	sc.wait("Telegram back", is(1), "opsgate_adapter_up", "adapter", "telegram")

	names := make([]string, 0, len(documented))
	for name := range documented {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		hist := sc.totals[name]
		switch {
		case !sc.present[name]:
			t.Errorf("%s is in the README but was never exported", name)
		case slices.Contains(static, name):
		case slices.Min(hist) == slices.Max(hist):
			t.Errorf("%s never moved in this scenario (always %v)", name, hist[0])
		}
	}
	s.stop(t)
}

// orphan stores, through a second store on the same database (as another
// replica would), a pending approval of a Telegram bot serve does not run,
// already past its expiry.
func orphan(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	args := []byte(`{"name":"web","replicas":0}`)
	hash, err := core.ActionHash("k8s", "scale_deployment", args)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = st.Apply(ctx, core.Batch{Approvals: []core.Approval{{
		ID: "0rphan000000000000000000000000aa", RunID: "orphan-run", ConvKey: "telegram:999:777",
		CallID: "call_orphan", Toolset: "k8s", Tool: "scale_deployment", Arguments: args, ActionHash: hash,
		Risk: core.RiskWrite, Requester: core.Actor{ID: "telegram:777"}, Status: core.ApprovalPending,
		CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(-time.Minute),
	}}})
	if err != nil {
		t.Fatal(err)
	}
}

// waitCard waits for an approval card (a message with Approve and Deny).
func waitCard(t *testing.T, tg *telegramtest.Server, chat int64) telegramtest.Message {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		for _, m := range tg.Messages(chat) {
			if len(m.Buttons) == 2 && strings.HasPrefix(m.Buttons[0].Data, "a:") {
				return m
			}
		}
		select {
		case <-tg.Changed():
		case <-deadline:
			t.Fatalf("no approval card in chat %d: %+v", chat, tg.Messages(chat))
		}
	}
}
