package main

import (
	"testing"

	"github.com/opsgate/opsgate/internal/deptest"
)

// Issue 22 (8) and issue 25: the binary does not link the Prometheus
// client library or what it brings (protobuf, the /proc reader,
// runtime/metrics): their inits and pages were a share of every start and
// of the idle RSS. internal/metrics writes the text format itself
// (TestMetricsServesTheFamiliesClientGolangServed checks it serves the
// same families).
func TestBinaryLinksNoPrometheusClient(t *testing.T) {
	deptest.Check(t, ".", map[string]string{
		"github.com/prometheus":      "internal/metrics writes /metrics itself; the client library is for tests only",
		"google.golang.org/protobuf": "nothing in the binary speaks protobuf; it came with client_golang",
		"runtime/metrics":            "its init builds a table at every start; internal/metrics reads runtime.MemStats",
		"expvar":                     "its init registers /debug/vars handlers and memstats; it came with client_golang",
	})
}
