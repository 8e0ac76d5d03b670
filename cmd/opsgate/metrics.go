package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/opsgate/opsgate/core"
)

// runStatuses are always exported, so that rate() works from the first run.
var runStatuses = []core.RunStatus{
	core.RunDone, core.RunStopped, core.RunAwaitingApproval, core.RunError, core.RunMaxIterations,
}

// writeMetrics writes the Prometheus text exposition format (0.0.4) by
// hand: a handful of series does not justify a client library.
func writeMetrics(w io.Writer, m core.Metrics, started, now time.Time) error {
	var b strings.Builder
	metric := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	metric("opsgate_build_info", "gauge", "Build information; always 1.")
	fmt.Fprintf(&b, "opsgate_build_info{version=%s,goversion=%s} 1\n", label(version), label(runtime.Version()))
	metric("opsgate_start_time_seconds", "gauge", "Start time of the process since the Unix epoch.")
	fmt.Fprintf(&b, "opsgate_start_time_seconds %d\n", started.Unix())
	metric("opsgate_uptime_seconds", "gauge", "Seconds since the process started.")
	fmt.Fprintf(&b, "opsgate_uptime_seconds %.3f\n", now.Sub(started).Seconds())

	metric("opsgate_runs_total", "counter", "Runs that ended, or paused for approval, by status.")
	statuses := slices.Clone(runStatuses)
	for st := range m.RunsByStatus {
		if !slices.Contains(statuses, st) {
			statuses = append(statuses, st)
		}
	}
	slices.Sort(statuses)
	for _, st := range statuses {
		fmt.Fprintf(&b, "opsgate_runs_total{status=%s} %d\n", label(string(st)), m.RunsByStatus[st])
	}
	metric("opsgate_active_runs", "gauge", "Runs in progress.")
	fmt.Fprintf(&b, "opsgate_active_runs %d\n", m.ActiveRuns)
	metric("opsgate_event_send_errors_total", "counter", "Events that an adapter failed to deliver.")
	fmt.Fprintf(&b, "opsgate_event_send_errors_total %d\n", m.SendErrors)
	_, err := io.WriteString(w, b.String())
	return err
}

// label quotes a label value: backslash, double quote and newline escaped.
func label(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
