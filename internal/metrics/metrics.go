package metrics

import (
	"log/slog"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/opsgate/opsgate/core"
)

// Metrics holds opsgate's collectors on a registry of its own (no global
// state, so tests can run several). It is safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	runs         *prometheus.CounterVec
	runDuration  *prometheus.HistogramVec
	ttft         prometheus.Histogram
	modelErrors  *prometheus.CounterVec
	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	decisions    *prometheus.CounterVec
	clicks       *prometheus.CounterVec
	apiCalls     *prometheus.CounterVec
	rateLimited  *prometheus.CounterVec

	lastAnswer atomic.Int64 // Unix nanoseconds of the model's last answer
}

// Label values exported from the start, so that rate() and alerts work
// before the first occurrence.
var (
	runStatuses = []core.RunStatus{core.RunDone, core.RunStopped, core.RunAwaitingApproval, core.RunError, core.RunMaxIterations}
	modelKinds  = []core.EventType{core.EventRateLimit, core.EventTransientError, core.EventWorkflowError}
	outcomes    = []core.ApprovalStatus{core.ApprovalApproved, core.ApprovalDenied, core.ApprovalExpired, core.ApprovalSuperseded, core.ApprovalCancelled}
)

// New returns the collectors of a process of version that started at
// started, with the Go runtime's and the process's standard ones.
func New(version string, started time.Time) *Metrics {
	reg := prometheus.NewRegistry()
	f := factory{reg}
	m := &Metrics{
		reg: reg,
		runs: f.counters("opsgate_runs_total",
			"Runs that ended, or paused for approval, by status (the completed event).", "status"),
		runDuration: f.histograms("opsgate_run_duration_seconds",
			"Wall time runs were active (pauses for approval excluded), by status.",
			[]float64{0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600}, "status"),
		ttft: f.histogram("opsgate_model_time_to_first_token_seconds",
			"Time from a model request to its first streamed token, per model call.",
			[]float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}),
		modelErrors: f.counters("opsgate_model_errors_total",
			"Model failures by event: rate_limit and transient_error were retried; workflow.error ended a run.", "kind"),
		toolCalls: f.counters("opsgate_tool_calls_total",
			"Tool calls that ran, by MCP server (opsgate for built-in tools), tool and outcome (ok, error).",
			"server", "tool", "outcome"),
		toolDuration: f.histograms("opsgate_tool_call_duration_seconds",
			"Duration of tool calls that ran, by MCP server and tool.",
			[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}, "server", "tool"),
		decisions: f.counters("opsgate_approval_decisions_total",
			"Approval requests settled in this process, by outcome (approved, denied, expired, superseded, cancelled).", "outcome"),
		clicks: f.counters("opsgate_approval_clicks_total",
			"Approve and Deny clicks (chat buttons and API decisions) handed to the engine, by platform (telegram, slack, discord, api) "+
				"and result (ok, not_allowed, already_decided, expired, not_found, hash_mismatch, error).", "platform", "result"),
		apiCalls: f.counters("opsgate_platform_api_calls_total",
			"Calls to chat platforms' APIs, by platform, endpoint and HTTP status code (error: no answer).",
			"platform", "endpoint", "code"),
		rateLimited: f.counters("opsgate_platform_rate_limited_total",
			"Calls to chat platforms' APIs answered 429 Too Many Requests, by platform and endpoint.",
			"platform", "endpoint"),
	}
	for _, st := range runStatuses {
		m.runs.WithLabelValues(string(st))
	}
	for _, k := range modelKinds {
		m.modelErrors.WithLabelValues(string(k))
	}
	for _, o := range outcomes {
		m.decisions.WithLabelValues(string(o))
	}
	for _, p := range decidePlatforms {
		for _, r := range decideResults {
			m.clicks.WithLabelValues(p, r)
		}
	}

	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "opsgate_build_info",
		Help:        "Build information; always 1.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	build.Set(1)
	start := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "opsgate_start_time_seconds", Help: "Start time of the process since the Unix epoch.",
	})
	start.Set(float64(started.UnixNano()) / 1e9)
	uptime := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "opsgate_uptime_seconds", Help: "Seconds since the process started.",
	}, func() float64 { return time.Since(started).Seconds() })
	reg.MustRegister(build, start, uptime,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics, when asked). A source that fails at scrape time (the store)
// is logged and left out; the rest is still served.
func (m *Metrics) Handler(log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// LastModelAnswer is when the model last answered (a first token or a
// complete answer), zero before it ever did.
func (m *Metrics) LastModelAnswer() time.Time {
	if n := m.lastAnswer.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// factory makes collectors registered on reg.
type factory struct{ reg *prometheus.Registry }

func (f factory) counters(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) histograms(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}
