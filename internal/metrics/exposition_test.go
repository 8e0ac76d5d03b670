package metrics_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/metrics"
)

var update = flag.Bool("update", false, "rewrite testdata/families.golden from what /metrics serves")

// everything returns Metrics with every source watched and every family
// moved at least once, so that every family /metrics can serve is served.
func everything(t *testing.T) *metrics.Metrics {
	t.Helper()
	m := metrics.New("v1.2.3", time.Unix(1_700_000_000, 500_000_000))
	m.Watch(metrics.Sources{
		Pending: func(context.Context) (core.PendingSummary, error) {
			return core.PendingSummary{Count: 2, Oldest: time.Now().Add(-time.Minute)}, nil
		},
		ActiveRuns: func() int { return 3 },
		SendErrors: func() int64 { return 4 },
		Adapters: func() []metrics.AdapterState {
			return []metrics.AdapterState{{Name: "telegram", Up: true}, {Name: "slack"}}
		},
		MCPServers: func() []tools.ServerState {
			return []tools.ServerState{{Name: "k8s", Status: tools.StatusConnected}, {Name: "broken", Status: tools.StatusFailed}}
		},
		Liveness: func() bool { return true },
	})
	for _, ev := range []core.Event{
		{Type: core.EventCompleted, Status: core.RunDone, Duration: 1500 * time.Millisecond},
		{Type: core.EventTTFT, Duration: 300 * time.Millisecond},
		{Type: core.EventRateLimit},
		{Type: core.EventToolResult, Call: &core.CallInfo{Name: "get_pods", Toolset: "k8s"}, Duration: 70 * time.Millisecond},
		{Type: core.EventToolError, Call: &core.CallInfo{Name: "load_toolset"}, Duration: time.Millisecond},
		{Type: core.EventToolApproved, Approval: &core.Approval{Status: core.ApprovalApproved}},
	} {
		m.Observe(ev)
	}
	m.Decided("telegram", nil)
	m.Decided("api", core.ErrNotFound)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: m.Transport("telegram", nil, metrics.APIMethod)}
	resp, err := c.Get(srv.URL + "/botX/sendMessage")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return m
}

// scrape GETs /metrics from h with the given Accept-Encoding and parses
// it strictly with the Prometheus text parser.
func scrape(t *testing.T, h http.Handler, encoding string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	r := httptest.NewRequest("GET", "/metrics", nil)
	if encoding != "" {
		r.Header.Set("Accept-Encoding", encoding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); expfmt.ResponseFormat(w.Header()).FormatType() != expfmt.TypeTextPlain {
		t.Errorf("Content-Type %q is not the Prometheus text format", ct)
	}
	body := w.Body.Bytes()
	if w.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams, string(body)
}

// families describes each family as one line: name, type, label names
// (le and quantile aside) and help.
func families(fams map[string]*dto.MetricFamily) string {
	var lines []string
	for name, f := range fams {
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		names := make([]string, 0, len(labels))
		for l := range labels {
			names = append(names, l)
		}
		slices.Sort(names)
		lines = append(lines, fmt.Sprintf("%s %s {%s} %s", name, strings.ToLower(f.GetType().String()), strings.Join(names, ","), f.GetHelp()))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// Issue 22 (footprint) and issue 25: /metrics is written by hand instead
// of by the Prometheus client library, and serves the same families as
// that library did: every name, type, label and help text in
// testdata/families.golden was written by client_golang v1.25 (its
// registry, Go and process collectors), and the scrape must parse with
// the Prometheus text parser, gzipped or not.
func TestMetricsServesTheFamiliesClientGolangServed(t *testing.T) {
	m := everything(t)
	h := m.Handler(slog.New(slog.DiscardHandler))
	fams, body := scrape(t, h, "")
	got := families(fams)
	golden := filepath.Join("testdata", "families.golden")
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
		t.Errorf("families differ from %s:\n got:\n%s\nwant:\n%s", golden, got, want)
	}
	// The values the scenario set.
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"opsgate_runs_total", map[string]string{"status": "done"}, 1},
		{"opsgate_runs_total", map[string]string{"status": "error"}, 0},
		{"opsgate_run_duration_seconds", map[string]string{"status": "done"}, 1},
		{"opsgate_model_time_to_first_token_seconds", nil, 1},
		{"opsgate_model_errors_total", map[string]string{"kind": "rate_limit"}, 1},
		{"opsgate_tool_calls_total", map[string]string{"server": "k8s", "tool": "get_pods", "outcome": "ok"}, 1},
		{"opsgate_tool_calls_total", map[string]string{"server": "opsgate", "tool": "load_toolset", "outcome": "error"}, 1},
		{"opsgate_approval_decisions_total", map[string]string{"outcome": "approved"}, 1},
		{"opsgate_approval_clicks_total", map[string]string{"platform": "api", "result": "not_found"}, 1},
		{"opsgate_approval_clicks_total", map[string]string{"platform": "slack", "result": "ok"}, 0},
		{"opsgate_platform_api_calls_total", map[string]string{"platform": "telegram", "endpoint": "sendMessage", "code": "429"}, 1},
		{"opsgate_platform_rate_limited_total", map[string]string{"platform": "telegram", "endpoint": "sendMessage"}, 1},
		{"opsgate_approvals_pending", nil, 2},
		{"opsgate_active_runs", nil, 3},
		{"opsgate_event_send_errors_total", nil, 4},
		{"opsgate_adapter_up", map[string]string{"adapter": "slack"}, 0},
		{"opsgate_adapter_up", map[string]string{"adapter": "telegram"}, 1},
		{"opsgate_mcp_server_up", map[string]string{"server": "k8s"}, 1},
		{"opsgate_mcp_server_failed", map[string]string{"server": "broken"}, 1},
		{"opsgate_replica_liveness", nil, 1},
		{"opsgate_build_info", map[string]string{"version": "v1.2.3"}, 1},
		{"opsgate_start_time_seconds", nil, 1_700_000_000.5},
	} {
		if v, ok := valueOf(fams[c.name], c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present: %v), want %v\n%s", c.name, c.labels, v, ok, c.want, body)
		}
	}
	// A histogram's buckets are cumulative and end with +Inf = count.
	h1 := fams["opsgate_run_duration_seconds"].GetMetric()[0].GetHistogram()
	if b := h1.GetBucket(); len(b) != 12 || !math.IsInf(b[11].GetUpperBound(), 1) || b[1].GetCumulativeCount() != 0 || b[2].GetCumulativeCount() != 1 || h1.GetSampleSum() != 1.5 {
		t.Errorf("opsgate_run_duration_seconds{status=done} = %v; want 1.5 s in the le=2.5 bucket and after", h1)
	}
	if v, _ := valueOf(fams["go_goroutines"], nil); v < 1 {
		t.Errorf("go_goroutines = %v", v)
	}

	// Gzipped, as Prometheus asks, it is the same.
	zfams, _ := scrape(t, h, "gzip")
	if got := families(zfams); got != string(want) {
		t.Errorf("gzipped families differ:\n%s", got)
	}
}

// A source that fails at scrape time (the store) is left out and logged;
// the rest is served.
func TestMetricsLeaveOutAFailingSource(t *testing.T) {
	m := metrics.New("dev", time.Now())
	m.Watch(metrics.Sources{
		Pending: func(context.Context) (core.PendingSummary, error) {
			return core.PendingSummary{}, fmt.Errorf("store is down")
		},
		ActiveRuns: func() int { return 1 },
	})
	var log bytes.Buffer
	fams, _ := scrape(t, m.Handler(slog.New(slog.NewTextHandler(&log, nil))), "")
	if _, ok := fams["opsgate_approvals_pending"]; ok {
		t.Error("opsgate_approvals_pending served while its source fails")
	}
	if v, ok := valueOf(fams["opsgate_active_runs"], nil); !ok || v != 1 {
		t.Errorf("opsgate_active_runs = %v, %v; want 1", v, ok)
	}
	if !strings.Contains(log.String(), "store is down") {
		t.Errorf("the failure was not logged: %q", log.String())
	}
}

// valueOf is the value (a histogram's count) of the series of f with
// exactly these labels (le and quantile aside).
func valueOf(f *dto.MetricFamily, labels map[string]string) (float64, bool) {
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// Series are counted from many goroutines while /metrics is scraped: no
// count is lost (make test runs this under the race detector).
func TestMetricsCountConcurrentlyWithScrapes(t *testing.T) {
	m := metrics.New("dev", time.Now())
	h := m.Handler(slog.New(slog.DiscardHandler))
	const workers, each = 8, 500
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				m.Observe(core.Event{Type: core.EventCompleted, Status: core.RunDone, Duration: time.Second})
				m.Observe(core.Event{Type: core.EventToolResult, Duration: time.Millisecond,
					Call: &core.CallInfo{Name: fmt.Sprintf("tool%d", (w+i)%3), Toolset: "k8s"}})
				m.Decided("slack", nil)
			}
		}()
	}
	for range 20 {
		scrape(t, h, "")
	}
	for range workers {
		<-done
	}
	fams, _ := scrape(t, h, "")
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"opsgate_runs_total", map[string]string{"status": "done"}, workers * each},
		{"opsgate_run_duration_seconds", map[string]string{"status": "done"}, workers * each},
		{"opsgate_approval_clicks_total", map[string]string{"platform": "slack", "result": "ok"}, workers * each},
	} {
		if v, ok := valueOf(fams[c.name], c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
	total := 0.0
	for _, s := range fams["opsgate_tool_calls_total"].GetMetric() {
		total += s.GetCounter().GetValue()
	}
	if total != workers*each {
		t.Errorf("opsgate_tool_calls_total sums to %v over %d series, want %d", total, len(fams["opsgate_tool_calls_total"].GetMetric()), workers*each)
	}
}
