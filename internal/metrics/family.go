package metrics

import (
	"bufio"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A family is one metric family as the Prometheus text format (version
// 0.0.4) writes it: a name, a help text, a type and its series. opsgate
// writes the format itself rather than linking the Prometheus client
// library, whose registry, protobuf types and /proc reader cost start-up
// time and resident pages of every process (docs/design.md §10).
type family struct {
	name, help, typ string
	series          []series
}

// series is one line of a counter or gauge, or one histogram or summary.
type series struct {
	labels []label // sorted by name
	value  float64
	// Histograms: cumulative counts of each bucket, +Inf last; summaries:
	// the quantiles' values. Both have a sum and a count.
	buckets   []bucket
	sum       float64
	count     uint64
	quantiles []bucket
}

type label struct{ name, value string }

// bucket is a histogram's bucket (le, cumulative count) or a summary's
// quantile (quantile, value).
type bucket struct{ bound, value float64 }

// Family types.
const (
	counterType   = "counter"
	gaugeType     = "gauge"
	histogramType = "histogram"
	summaryType   = "summary"
)

// gauge is a family of one unlabelled gauge.
func gauge(name, help string, v float64, labels ...label) family {
	return family{name: name, help: help, typ: gaugeType, series: []series{{labels: labels, value: v}}}
}

// counterOf is a family of one unlabelled counter.
func counterOf(name, help string, v float64) family {
	return family{name: name, help: help, typ: counterType, series: []series{{value: v}}}
}

// labelled pairs names with values, sorted by name as Prometheus writes
// them.
func labelled(names, values []string) []label {
	ls := make([]label, len(names))
	for i := range names {
		ls[i] = label{names[i], values[i]}
	}
	slices.SortFunc(ls, func(a, b label) int { return strings.Compare(a.name, b.name) })
	return ls
}

// vec is what counter and histogram vectors share: a series per
// combination of label values, made on first use.
type vec[S any] struct {
	name, help string
	labels     []string
	make       func(values []string) *S

	mu     sync.RWMutex
	series map[string]*S
	order  []string // keys, for a stable walk
	values map[string][]string
}

func newVec[S any](name, help string, labels []string, mk func([]string) *S) *vec[S] {
	return &vec[S]{name: name, help: help, labels: labels, make: mk, series: map[string]*S{}, values: map[string][]string{}}
}

// WithLabelValues returns the series of values (one per label, in the
// vector's order), making it at zero on first use. Like client_golang's,
// it panics on a wrong number of values: a programming error.
func (v *vec[S]) WithLabelValues(values ...string) *S {
	if len(values) != len(v.labels) {
		panic("metrics: " + v.name + " takes " + strconv.Itoa(len(v.labels)) + " label values, got " + strconv.Itoa(len(values)))
	}
	key := strings.Join(values, "\xff")
	v.mu.RLock()
	s, ok := v.series[key]
	v.mu.RUnlock()
	if ok {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.series[key]; ok {
		return s
	}
	s = v.make(values)
	v.series[key] = s
	v.values[key] = slices.Clone(values)
	v.order = append(v.order, key)
	return s
}

// each calls f with the label values and series of every series.
func (v *vec[S]) each(f func(values []string, s *S)) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, k := range v.order {
		f(v.values[k], v.series[k])
	}
}

// counter is one counter series.
type counter struct{ bits atomic.Uint64 }

// Inc adds one.
func (c *counter) Inc() { c.Add(1) }

// Add adds d (not negative).
func (c *counter) Add(d float64) {
	for {
		old := c.bits.Load()
		if c.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func (c *counter) value() float64 { return math.Float64frombits(c.bits.Load()) }

// counterVec is a counter family by labels.
type counterVec struct{ *vec[counter] }

func newCounterVec(name, help string, labels ...string) counterVec {
	return counterVec{newVec(name, help, labels, func([]string) *counter { return &counter{} })}
}

func (v counterVec) family() family {
	f := family{name: v.name, help: v.help, typ: counterType}
	v.each(func(values []string, c *counter) {
		f.series = append(f.series, series{labels: labelled(v.labels, values), value: c.value()})
	})
	return f
}

// curried is a counter vector with its first label's value fixed, as the
// transport of one platform uses it.
type curried struct {
	v     counterVec
	first string
}

// WithLabelValues returns the series of the fixed value and values.
func (c curried) WithLabelValues(values ...string) *counter {
	return c.v.WithLabelValues(append([]string{c.first}, values...)...)
}

// histogram is one histogram series. Observations are rare (one a run or
// a tool call), so a mutex keeps count, sum and buckets consistent.
type histogram struct {
	upper []float64 // bucket bounds, ascending, +Inf not included

	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf's
	sum    float64
}

func newHistogram(upper []float64) *histogram {
	return &histogram{upper: upper, counts: make([]uint64, len(upper)+1)}
}

// Observe records v in the first bucket whose bound is at least v.
func (h *histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.upper, v)
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.mu.Unlock()
}

func (h *histogram) series(labels []label) series {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := series{labels: labels, sum: h.sum, buckets: make([]bucket, len(h.counts))}
	var cum uint64
	for i, n := range h.counts {
		cum += n
		bound := math.Inf(1)
		if i < len(h.upper) {
			bound = h.upper[i]
		}
		s.buckets[i] = bucket{bound, float64(cum)}
	}
	s.count = cum
	return s
}

// histogramVec is a histogram family by labels.
type histogramVec struct{ *vec[histogram] }

func newHistogramVec(name, help string, buckets []float64, labels ...string) histogramVec {
	return histogramVec{newVec(name, help, labels, func([]string) *histogram { return newHistogram(buckets) })}
}

func (v histogramVec) family() family {
	f := family{name: v.name, help: v.help, typ: histogramType}
	v.each(func(values []string, h *histogram) {
		f.series = append(f.series, h.series(labelled(v.labels, values)))
	})
	return f
}

// write writes the families sorted by name, each family's series sorted
// by their label values, as client_golang's registry does. A family
// without series is left out.
func write(w *bufio.Writer, fams []family) error {
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	for _, f := range fams {
		if len(f.series) == 0 {
			continue
		}
		slices.SortStableFunc(f.series, func(a, b series) int {
			for i := range min(len(a.labels), len(b.labels)) {
				if c := strings.Compare(a.labels[i].value, b.labels[i].value); c != 0 {
					return c
				}
			}
			return len(a.labels) - len(b.labels)
		})
		w.WriteString("# HELP " + f.name + " " + escapeHelp(f.help) + "\n")
		w.WriteString("# TYPE " + f.name + " " + f.typ + "\n")
		for _, s := range f.series {
			switch f.typ {
			case histogramType:
				for _, b := range s.buckets {
					line(w, f.name+"_bucket", s.labels, &label{"le", formatFloat(b.bound)}, b.value)
				}
				line(w, f.name+"_sum", s.labels, nil, s.sum)
				line(w, f.name+"_count", s.labels, nil, float64(s.count))
			case summaryType:
				for _, q := range s.quantiles {
					line(w, f.name, s.labels, &label{"quantile", formatFloat(q.bound)}, q.value)
				}
				line(w, f.name+"_sum", s.labels, nil, s.sum)
				line(w, f.name+"_count", s.labels, nil, float64(s.count))
			default:
				line(w, f.name, s.labels, nil, s.value)
			}
		}
	}
	return w.Flush()
}

// line writes one sample: name{labels,extra} value.
func line(w *bufio.Writer, name string, labels []label, extra *label, v float64) {
	w.WriteString(name)
	if len(labels) > 0 || extra != nil {
		w.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(l.name + `="` + escapeLabel(l.value) + `"`)
		}
		if extra != nil {
			if len(labels) > 0 {
				w.WriteByte(',')
			}
			w.WriteString(extra.name + `="` + extra.value + `"`)
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

// formatFloat writes a value as the text format does: +Inf, -Inf, NaN,
// else Go's shortest representation ('g').
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }
