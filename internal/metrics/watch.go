package metrics

import (
	"context"
	"log/slog"
	"time"

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
	// (docs/design.md §16).
	Liveness func() bool
}

// AdapterState is one chat adapter's connection, as its Health says.
type AdapterState struct {
	Name string
	Up   bool
}

// scrapeTimeout bounds the store query of one scrape.
const scrapeTimeout = 2 * time.Second

// Watch adds src, read at every scrape. Call it once, before serving.
func (m *Metrics) Watch(src Sources) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	m.watched = append(m.watched, &scraped{src: src, now: time.Now})
}

// Help texts of the families read from Sources.
const (
	pendingHelp    = "Approval requests waiting for a decision, in the store (every replica's)."
	oldestHelp     = "Age of the oldest approval request waiting for a decision; 0 when none is."
	activeHelp     = "Runs in progress in this process (a run paused for approval is not active)."
	sendErrorsHelp = "Events of runs that could not be handed to an adapter."
	adapterHelp    = "1 when the chat adapter is connected to its platform (see /readyz for why not), else 0."
	mcpUpHelp      = "1 when this process has a live connection to the MCP server, else 0 (servers start on first use)."
	livenessHelp   = "1 while this replica holds its liveness in the store (it claims, takes up and fires), else 0 (see /readyz)."
	mcpFailedHelp  = "1 when the MCP server's last start or call failed (it is restarted on next use), else 0."
)

// scraped reads Sources.
type scraped struct {
	src Sources
	now func() time.Time
}

// collect reads every source; one that fails is logged and left out.
func (c *scraped) collect(log *slog.Logger) []family {
	var out []family
	if c.src.Pending != nil {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		p, err := c.src.Pending(ctx)
		cancel()
		if err != nil {
			log.Warn("metrics: opsgate_approvals_pending left out of this scrape", "err", err)
		} else {
			age := 0.0
			if p.Count > 0 {
				age = max(0, c.now().Sub(p.Oldest).Seconds())
			}
			out = append(out,
				gauge("opsgate_approvals_pending", pendingHelp, float64(p.Count)),
				gauge("opsgate_approvals_oldest_pending_seconds", oldestHelp, age))
		}
	}
	if c.src.ActiveRuns != nil {
		out = append(out, gauge("opsgate_active_runs", activeHelp, float64(c.src.ActiveRuns())))
	}
	if c.src.SendErrors != nil {
		out = append(out, counterOf("opsgate_event_send_errors_total", sendErrorsHelp, float64(c.src.SendErrors())))
	}
	if c.src.Liveness != nil {
		out = append(out, gauge("opsgate_replica_liveness", livenessHelp, bit(c.src.Liveness())))
	}
	if c.src.Adapters != nil {
		f := family{name: "opsgate_adapter_up", help: adapterHelp, typ: gaugeType}
		for _, a := range c.src.Adapters() {
			f.series = append(f.series, series{labels: []label{{"adapter", a.Name}}, value: bit(a.Up)})
		}
		out = append(out, f)
	}
	if c.src.MCPServers != nil {
		up := family{name: "opsgate_mcp_server_up", help: mcpUpHelp, typ: gaugeType}
		failed := family{name: "opsgate_mcp_server_failed", help: mcpFailedHelp, typ: gaugeType}
		for _, s := range c.src.MCPServers() {
			l := []label{{"server", s.Name}}
			up.series = append(up.series, series{labels: l, value: bit(s.Status == tools.StatusConnected)})
			failed.series = append(failed.series, series{labels: l, value: bit(s.Status == tools.StatusFailed)})
		}
		out = append(out, up, failed)
	}
	return out
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
