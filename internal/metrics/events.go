package metrics

import (
	"context"
	"time"

	"github.com/opsgate/opsgate/core"
)

// builtinServer is the server label of opsgate's own tools (load_toolset).
const builtinServer = "opsgate"

// Subscriber returns a sender that observes each event, to subscribe to
// every conversation (core.Engine.Subscribe). Observing never blocks.
func (m *Metrics) Subscriber() core.EventSender {
	return core.SenderFunc(func(_ context.Context, ev core.Event) error {
		m.Observe(ev)
		return nil
	})
}

// Observe counts what one event of a run says.
func (m *Metrics) Observe(ev core.Event) {
	switch ev.Type {
	case core.EventCompleted:
		m.runs.WithLabelValues(string(ev.Status)).Inc()
		// Runs closed without running (superseded, cancelled while
		// paused) report no duration: they are not zero-second runs.
		if ev.Duration > 0 {
			m.runDuration.WithLabelValues(string(ev.Status)).Observe(ev.Duration.Seconds())
		}
	case core.EventTTFT:
		m.ttft.Observe(ev.Duration.Seconds())
		m.lastAnswer.Store(time.Now().UnixNano())
	case core.EventGenerationComplete:
		m.lastAnswer.Store(time.Now().UnixNano())
	case core.EventRateLimit, core.EventTransientError, core.EventWorkflowError:
		m.modelErrors.WithLabelValues(string(ev.Type)).Inc()
	case core.EventToolResult, core.EventToolError:
		// A tool.error without a tool name is a toolset that could not be
		// listed, not a call; the MCP server gauges show it.
		if ev.Call == nil || ev.Call.Name == "" {
			return
		}
		server := ev.Call.Toolset
		if server == "" {
			server = builtinServer
		}
		outcome := "ok"
		if ev.Type == core.EventToolError {
			outcome = "error"
		}
		m.toolCalls.WithLabelValues(server, ev.Call.Name, outcome).Inc()
		m.toolDuration.WithLabelValues(server, ev.Call.Name).Observe(ev.Duration.Seconds())
	case core.EventToolApproved, core.EventToolDenied:
		if ev.Approval != nil {
			m.decisions.WithLabelValues(string(ev.Approval.Status)).Inc()
		}
	}
}
