package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// Issue 25: no opsgate package's init allocates more than a few
// kilobytes. Start-up allocates close to the 4 MB at which Go's first
// collection runs, and a bounded regexp in a package variable (recipe
// names, {1,128}) had added 80 KB and 1,500 allocations to every start.
// What a package needs at run time is built when first used.
func TestOpsgatePackageInitsAllocateLittle(t *testing.T) {
	const limit = 16 << 10
	cmd := exec.Command(opsgateBinary(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("opsgate version: %v\n%s", err, out)
	}
	seen := 0
	for line := range strings.SplitSeq(string(out), "\n") {
		// init github.com/opsgate/opsgate/x @2.8 ms, 0.01 ms clock, 10576 bytes, 36 allocs
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/opsgate/opsgate/") {
			continue
		}
		seen++
		bytes, err := strconv.Atoi(f[7])
		if err != nil || f[8] != "bytes," {
			t.Fatalf("cannot read %q", line)
		}
		if bytes > limit {
			t.Errorf("%s: its init allocates %d bytes; want at most %d (build what it needs when first used)", f[1], bytes, limit)
		}
	}
	if seen == 0 {
		t.Fatalf("GODEBUG=inittrace=1 printed no opsgate package init:\n%s", out)
	}
}
