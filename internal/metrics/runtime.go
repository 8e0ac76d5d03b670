package metrics

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// The go_* and process_* families are those client_golang's Go and
// process collectors served (testdata/families.golden), with the same
// names, types and help, read from the runtime and /proc at scrape time.

// memStat is one go_memstats_* family read from runtime.MemStats.
type memStat struct {
	name, typ, help string
	value           func(s *runtime.MemStats) float64
}

var memStats = []memStat{
	{"go_memstats_alloc_bytes", gaugeType, "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", func(s *runtime.MemStats) float64 { return float64(s.HeapAlloc) }},
	{"go_memstats_alloc_bytes_total", counterType, "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", func(s *runtime.MemStats) float64 { return float64(s.TotalAlloc) }},
	{"go_memstats_buck_hash_sys_bytes", gaugeType, "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", func(s *runtime.MemStats) float64 { return float64(s.BuckHashSys) }},
	{"go_memstats_frees_total", counterType, "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", func(s *runtime.MemStats) float64 { return float64(s.Frees) }},
	{"go_memstats_gc_sys_bytes", gaugeType, "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", func(s *runtime.MemStats) float64 { return float64(s.GCSys) }},
	{"go_memstats_heap_alloc_bytes", gaugeType, "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", func(s *runtime.MemStats) float64 { return float64(s.HeapAlloc) }},
	{"go_memstats_heap_idle_bytes", gaugeType, "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", func(s *runtime.MemStats) float64 { return float64(s.HeapIdle) }},
	{"go_memstats_heap_inuse_bytes", gaugeType, "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", func(s *runtime.MemStats) float64 { return float64(s.HeapInuse) }},
	{"go_memstats_heap_objects", gaugeType, "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", func(s *runtime.MemStats) float64 { return float64(s.HeapObjects) }},
	{"go_memstats_heap_released_bytes", gaugeType, "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", func(s *runtime.MemStats) float64 { return float64(s.HeapReleased) }},
	{"go_memstats_heap_sys_bytes", gaugeType, "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", func(s *runtime.MemStats) float64 { return float64(s.HeapSys) }},
	{"go_memstats_last_gc_time_seconds", gaugeType, "Number of seconds since 1970 of last garbage collection.", func(s *runtime.MemStats) float64 { return float64(s.LastGC) / 1e9 }},
	{"go_memstats_mallocs_total", counterType, "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", func(s *runtime.MemStats) float64 { return float64(s.Mallocs) }},
	{"go_memstats_mcache_inuse_bytes", gaugeType, "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", func(s *runtime.MemStats) float64 { return float64(s.MCacheInuse) }},
	{"go_memstats_mcache_sys_bytes", gaugeType, "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", func(s *runtime.MemStats) float64 { return float64(s.MCacheSys) }},
	{"go_memstats_mspan_inuse_bytes", gaugeType, "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", func(s *runtime.MemStats) float64 { return float64(s.MSpanInuse) }},
	{"go_memstats_mspan_sys_bytes", gaugeType, "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", func(s *runtime.MemStats) float64 { return float64(s.MSpanSys) }},
	{"go_memstats_next_gc_bytes", gaugeType, "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", func(s *runtime.MemStats) float64 { return float64(s.NextGC) }},
	{"go_memstats_other_sys_bytes", gaugeType, "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", func(s *runtime.MemStats) float64 { return float64(s.OtherSys) }},
	{"go_memstats_stack_inuse_bytes", gaugeType, "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", func(s *runtime.MemStats) float64 { return float64(s.StackInuse) }},
	{"go_memstats_stack_sys_bytes", gaugeType, "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", func(s *runtime.MemStats) float64 { return float64(s.StackSys) }},
	{"go_memstats_sys_bytes", gaugeType, "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", func(s *runtime.MemStats) float64 { return float64(s.Sys) }},
}

// goFamilies reads the Go runtime's families.
func goFamilies() []family {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out := make([]family, 0, len(memStats)+7)
	for _, m := range memStats {
		out = append(out, family{name: m.name, help: m.help, typ: m.typ, series: []series{{value: m.value(&ms)}}})
	}
	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	pause := series{sum: gc.PauseTotal.Seconds(), count: uint64(gc.NumGC)}
	for i, q := range gc.PauseQuantiles {
		pause.quantiles = append(pause.quantiles, bucket{float64(i) / 4, q.Seconds()})
	}
	threads, _ := runtime.ThreadCreateProfile(nil)
	return append(out,
		family{name: "go_gc_duration_seconds", typ: summaryType, series: []series{pause},
			help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."},
		gauge("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.",
			gogc),
		gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.",
			float64(debug.SetMemoryLimit(-1))), // a negative limit only reads it
		gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		gauge("go_info", "Information about the Go environment.", 1, label{"version", runtime.Version()}),
		gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.",
			float64(runtime.GOMAXPROCS(0))),
		gauge("go_threads", "Number of OS threads created.", float64(threads)),
	)
}

// gogc is the GC percentage as the runtime read it from GOGC at start
// ("off" is -1). opsgate never calls debug.SetGCPercent, and reading it
// through runtime/metrics would link that package's init.
var gogc = func() float64 {
	switch v := os.Getenv("GOGC"); v {
	case "":
		return 100
	case "off":
		return -1
	default:
		if n, err := strconv.Atoi(v); err == nil {
			return float64(n)
		}
		return 100
	}
}()

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on every
// Linux architecture Go supports).
const clockTicks = 100

// processFamilies reads the process's families from /proc/self, as
// client_golang's process collector does on Linux. Where /proc cannot be
// read (another OS), there are none.
func processFamilies() []family {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil
	}
	// The fields after the command name, which may contain spaces.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 22 {
		return nil
	}
	num := func(i int) float64 { v, _ := strconv.ParseFloat(f[i], 64); return v }
	// f[0] is field 3 (state) of proc(5): utime is 14, stime 15,
	// starttime 22, vsize 23, rss 24.
	utime, stime, start, vsize, rss := num(11), num(12), num(19), num(20), num(21)
	out := []family{
		counterOf("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", (utime+stime)/clockTicks),
		gauge("process_resident_memory_bytes", "Resident memory size in bytes.", rss*float64(os.Getpagesize())),
		gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", vsize),
	}
	if boot, ok := bootTime(); ok {
		out = append(out, gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", boot+start/clockTicks))
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		out = append(out, gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds))))
	}
	if limits, err := os.ReadFile("/proc/self/limits"); err == nil {
		if v, ok := softLimit(string(limits), "Max open files"); ok {
			out = append(out, gauge("process_max_fds", "Maximum number of open file descriptors.", v))
		}
		if v, ok := softLimit(string(limits), "Max address space"); ok {
			out = append(out, gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", v))
		}
	}
	if in, outOctets, ok := ipOctets(); ok {
		out = append(out,
			counterOf("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", in),
			counterOf("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", outOctets))
	}
	return out
}

// bootTime is the system's boot time (btime of /proc/stat), in seconds
// since the Unix epoch.
func bootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for l := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(l, "btime "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// softLimit reads the soft limit of the row named name of
// /proc/self/limits; "unlimited" is the largest uint64.
func softLimit(limits, name string) (float64, bool) {
	for l := range strings.Lines(limits) {
		rest, ok := strings.CutPrefix(l, name)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return math.MaxUint64, true
		}
		v, err := strconv.ParseFloat(f[0], 64)
		return v, err == nil
	}
	return 0, false
}

// ipOctets reads InOctets and OutOctets of the IpExt rows of
// /proc/self/net/netstat (a header row, then a row of values).
func ipOctets() (in, out float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var header []string
	for l := range strings.Lines(string(b)) {
		rest, found := strings.CutPrefix(l, "IpExt:")
		if !found {
			continue
		}
		if header == nil {
			header = strings.Fields(rest)
			continue
		}
		vals := strings.Fields(rest)
		var gotIn, gotOut bool
		for i, h := range header {
			if i >= len(vals) {
				break
			}
			switch h {
			case "InOctets":
				in, err = strconv.ParseFloat(vals[i], 64)
				gotIn = err == nil
			case "OutOctets":
				out, err = strconv.ParseFloat(vals[i], 64)
				gotOut = err == nil
			}
		}
		return in, out, gotIn && gotOut
	}
	return 0, 0, false
}
