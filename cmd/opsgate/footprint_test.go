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

// Issue 25: the inits of every package the binary links allocate less
// than a megabyte together. They allocated 2.2 MB, 1.7 MB of it (and
// about 3 ms of every start, before main) in jsonschema/v6 compiling the
// metaschemas of five JSON Schema drafts that most processes never use;
// third_party/jsonschema compiles them at the first Compile instead. With
// that, start-up no longer reaches Go's first collection (about 1 MB of
// idle RSS).
func TestInitsOfTheBinaryAllocateUnderAMegabyte(t *testing.T) {
	const limit = 1 << 20
	total, top, topBytes := 0, "", 0
	for pkg, bytes := range initAllocations(t) {
		total += bytes
		if bytes > topBytes {
			top, topBytes = pkg, bytes
		}
	}
	if total > limit {
		t.Errorf("the package inits allocate %d bytes together; want at most %d (the most: %s, %d bytes)", total, limit, top, topBytes)
	}
}

// Issue 25: no opsgate package's init allocates more than a few
// kilobytes. Start-up allocates close to the 4 MB at which Go's first
// collection runs, and a bounded regexp in a package variable (recipe
// names, {1,128}) had added 80 KB and 1,500 allocations to every start.
// What a package needs at run time is built when first used.
func TestOpsgatePackageInitsAllocateLittle(t *testing.T) {
	const limit = 16 << 10
	seen := 0
	for pkg, bytes := range initAllocations(t) {
		if !strings.HasPrefix(pkg, "github.com/opsgate/opsgate/") {
			continue
		}
		seen++
		if bytes > limit {
			t.Errorf("%s: its init allocates %d bytes; want at most %d (build what it needs when first used)", pkg, bytes, limit)
		}
	}
	if seen == 0 {
		t.Fatal("GODEBUG=inittrace=1 printed no opsgate package init")
	}
}

// initAllocations runs the real binary with GODEBUG=inittrace=1 and
// returns how many bytes each package's init allocated.
func initAllocations(t *testing.T) map[string]int {
	t.Helper()
	cmd := exec.Command(opsgateBinary(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("opsgate version: %v\n%s", err, out)
	}
	allocs := map[string]int{}
	for line := range strings.SplitSeq(string(out), "\n") {
		// init github.com/opsgate/opsgate/x @2.8 ms, 0.01 ms clock, 10576 bytes, 36 allocs
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "init" {
			continue
		}
		bytes, err := strconv.Atoi(f[7])
		if err != nil || f[8] != "bytes," {
			t.Fatalf("cannot read %q", line)
		}
		allocs[f[1]] += bytes
	}
	if len(allocs) == 0 {
		t.Fatalf("GODEBUG=inittrace=1 printed no package init:\n%s", out)
	}
	return allocs
}
