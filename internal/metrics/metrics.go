package metrics

import (
	"bufio"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Metrics holds opsgate's families (no global state, so tests can run
// several). It is safe for concurrent use.
type Metrics struct {
	version string
	started time.Time

	runs         counterVec
	runDuration  histogramVec
	ttft         *histogram
	modelErrors  counterVec
	toolCalls    counterVec
	toolDuration histogramVec
	decisions    counterVec
	clicks       counterVec
	apiCalls     counterVec
	rateLimited  counterVec

	// watched are the sources read at every scrape (Watch).
	watchMu sync.Mutex
	watched []*scraped

	lastAnswer atomic.Int64 // Unix nanoseconds of the model's last answer
}

// Label values exported from the start, so that rate() and alerts work
// before the first occurrence.
var (
	runStatuses = []core.RunStatus{core.RunDone, core.RunStopped, core.RunAwaitingApproval, core.RunError, core.RunMaxIterations}
	modelKinds  = []core.EventType{core.EventRateLimit, core.EventTransientError, core.EventWorkflowError}
	outcomes    = []core.ApprovalStatus{core.ApprovalApproved, core.ApprovalDenied, core.ApprovalExpired, core.ApprovalSuperseded, core.ApprovalCancelled}
)

const ttftHelp = "Time from a model request to its first streamed token, per model call."

// New returns the families of a process of version that started at
// started, with the Go runtime's and the process's standard ones.
func New(version string, started time.Time) *Metrics {
	m := &Metrics{
		version: version, started: started,
		runs: newCounterVec("opsgate_runs_total",
			"Runs that ended, or paused for approval, by status (the completed event).", "status"),
		runDuration: newHistogramVec("opsgate_run_duration_seconds",
			"Wall time runs were active (pauses for approval excluded), by status.",
			[]float64{0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600}, "status"),
		ttft: newHistogram([]float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}),
		modelErrors: newCounterVec("opsgate_model_errors_total",
			"Model failures by event: rate_limit and transient_error were retried; workflow.error ended a run.", "kind"),
		toolCalls: newCounterVec("opsgate_tool_calls_total",
			"Tool calls that ran, by MCP server (opsgate for built-in tools), tool and outcome (ok, error).",
			"server", "tool", "outcome"),
		toolDuration: newHistogramVec("opsgate_tool_call_duration_seconds",
			"Duration of tool calls that ran, by MCP server and tool.",
			[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}, "server", "tool"),
		decisions: newCounterVec("opsgate_approval_decisions_total",
			"Approval requests settled in this process, by outcome (approved, denied, expired, superseded, cancelled).", "outcome"),
		clicks: newCounterVec("opsgate_approval_clicks_total",
			"Approve and Deny clicks (chat buttons and API decisions) handed to the engine, by platform (telegram, slack, discord, api) "+
				"and result (ok, not_allowed, already_decided, expired, not_found, hash_mismatch, error).", "platform", "result"),
		apiCalls: newCounterVec("opsgate_platform_api_calls_total",
			"Calls to chat platforms' APIs, by platform, endpoint and HTTP status code (error: no answer).",
			"platform", "endpoint", "code"),
		rateLimited: newCounterVec("opsgate_platform_rate_limited_total",
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
	return m
}

// gather reads every family: opsgate's, the watched sources' (a source
// that fails is logged and left out), the Go runtime's and the process's.
func (m *Metrics) gather(log *slog.Logger) []family {
	fams := []family{
		m.runs.family(), m.runDuration.family(), m.modelErrors.family(), m.toolCalls.family(),
		m.toolDuration.family(), m.decisions.family(), m.clicks.family(), m.apiCalls.family(), m.rateLimited.family(),
		{name: "opsgate_model_time_to_first_token_seconds", help: ttftHelp, typ: histogramType, series: []series{m.ttft.series(nil)}},
		gauge("opsgate_build_info", "Build information; always 1.", 1,
			label{"goversion", runtime.Version()}, label{"version", m.version}),
		gauge("opsgate_start_time_seconds", "Start time of the process since the Unix epoch.", float64(m.started.UnixNano())/1e9),
		gauge("opsgate_uptime_seconds", "Seconds since the process started.", time.Since(m.started).Seconds()),
	}
	m.watchMu.Lock()
	watched := m.watched
	m.watchMu.Unlock()
	for _, w := range watched {
		fams = append(fams, w.collect(log)...)
	}
	fams = append(fams, goFamilies()...)
	return append(fams, processFamilies()...)
}

// contentType is the Prometheus text format, version 0.0.4.
const contentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// Handler serves the families in the Prometheus text format, gzipped when
// the scraper accepts it (Prometheus does). A source that fails at scrape
// time (the store) is logged and left out; the rest is still served.
func (m *Metrics) Handler(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fams := m.gather(log)
		w.Header().Set("Content-Type", contentType)
		var out io.Writer = w
		if acceptsGzip(r) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Add("Vary", "Accept-Encoding")
			zw := gzip.NewWriter(w)
			defer zw.Close()
			out = zw
		}
		if err := write(bufio.NewWriter(out), fams); err != nil {
			log.Debug("metrics: writing a scrape", "err", err)
		}
	})
}

func acceptsGzip(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		enc, _, _ := strings.Cut(part, ";")
		if strings.TrimSpace(enc) == "gzip" {
			return true
		}
	}
	return false
}

// LastModelAnswer is when the model last answered (a first token or a
// complete answer), zero before it ever did.
func (m *Metrics) LastModelAnswer() time.Time {
	if n := m.lastAnswer.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}
