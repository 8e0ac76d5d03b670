package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
)

// Sources are read at every scrape. Each is optional.
type Sources struct {
	// Pending summarises the store's pending approvals.
	Pending func(ctx context.Context) (core.PendingSummary, error)
	// ActiveRuns and SendErrors are the engine's (Engine.Metrics,
	// Engine.SendErrors).
	ActiveRuns func() int
	SendErrors func() int64
	// Adapters reports each chat adapter's connection.
	Adapters func() []AdapterState
	// MCPServers reports the tool host's servers (tools.Host.States).
	MCPServers func() []tools.ServerState
	// Liveness reports whether this replica can show it is alive
	// (DESIGN §16).
	Liveness func() bool
}

// AdapterState is one chat adapter's connection, as its Health says.
type AdapterState struct {
	Name string
	Up   bool
}

// scrapeTimeout bounds the store query of one scrape.
const scrapeTimeout = 2 * time.Second

// Watch registers src, read at every scrape. Call it once, before serving.
func (m *Metrics) Watch(src Sources) {
	m.reg.MustRegister(&scraped{src: src, now: time.Now})
}

var (
	pendingDesc = prometheus.NewDesc("opsgate_approvals_pending",
		"Approval requests waiting for a decision, in the store (every replica's).", nil, nil)
	oldestDesc = prometheus.NewDesc("opsgate_approvals_oldest_pending_seconds",
		"Age of the oldest approval request waiting for a decision; 0 when none is.", nil, nil)
	activeDesc = prometheus.NewDesc("opsgate_active_runs",
		"Runs in progress in this process (a run paused for approval is not active).", nil, nil)
	sendErrorsDesc = prometheus.NewDesc("opsgate_event_send_errors_total",
		"Events of runs that could not be handed to an adapter.", nil, nil)
	adapterDesc = prometheus.NewDesc("opsgate_adapter_up",
		"1 when the chat adapter is connected to its platform (see /readyz for why not), else 0.", []string{"adapter"}, nil)
	mcpUpDesc = prometheus.NewDesc("opsgate_mcp_server_up",
		"1 when this process has a live connection to the MCP server, else 0 (servers start on first use).", []string{"server"}, nil)
	livenessDesc = prometheus.NewDesc("opsgate_replica_liveness",
		"1 while this replica holds its liveness in the store (it claims, takes up and fires), else 0 (see /readyz).", nil, nil)
	mcpFailedDesc = prometheus.NewDesc("opsgate_mcp_server_failed",
		"1 when the MCP server's last start or call failed (it is restarted on next use), else 0.", []string{"server"}, nil)
)

// scraped is the collector of Sources.
type scraped struct {
	src Sources
	now func() time.Time
}

func (c *scraped) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pendingDesc, oldestDesc, activeDesc, sendErrorsDesc, adapterDesc, mcpUpDesc, mcpFailedDesc, livenessDesc} {
		ch <- d
	}
}

func (c *scraped) Collect(ch chan<- prometheus.Metric) {
	if c.src.Pending != nil {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		p, err := c.src.Pending(ctx)
		cancel()
		if err != nil {
			ch <- prometheus.NewInvalidMetric(pendingDesc, err)
		} else {
			age := 0.0
			if p.Count > 0 {
				age = max(0, c.now().Sub(p.Oldest).Seconds())
			}
			ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(p.Count))
			ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
		}
	}
	if c.src.ActiveRuns != nil {
		ch <- prometheus.MustNewConstMetric(activeDesc, prometheus.GaugeValue, float64(c.src.ActiveRuns()))
	}
	if c.src.SendErrors != nil {
		ch <- prometheus.MustNewConstMetric(sendErrorsDesc, prometheus.CounterValue, float64(c.src.SendErrors()))
	}
	if c.src.Liveness != nil {
		ch <- prometheus.MustNewConstMetric(livenessDesc, prometheus.GaugeValue, bit(c.src.Liveness()))
	}
	if c.src.Adapters != nil {
		for _, a := range c.src.Adapters() {
			ch <- prometheus.MustNewConstMetric(adapterDesc, prometheus.GaugeValue, bit(a.Up), a.Name)
		}
	}
	if c.src.MCPServers != nil {
		for _, s := range c.src.MCPServers() {
			ch <- prometheus.MustNewConstMetric(mcpUpDesc, prometheus.GaugeValue, bit(s.Status == tools.StatusConnected), s.Name)
			ch <- prometheus.MustNewConstMetric(mcpFailedDesc, prometheus.GaugeValue, bit(s.Status == tools.StatusFailed), s.Name)
		}
	}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
