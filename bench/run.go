package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// Options choose and size the figures of a run.
type Options struct {
	// Only lists the figures to run ("1", "6", "7", "8"); empty runs all.
	Only []string
	// Quick shrinks every figure to a smoke test: the numbers mean nothing,
	// but every code path runs.
	Quick bool
	// Overhead sizes figure 1.
	Overhead OverheadOptions
	// Samples is figure 6's number of sequential messages (default 200) and
	// Bursts its number of 20-conversation bursts (default 5).
	Samples, Bursts int
}

func (o *Options) defaults() {
	if o.Quick {
		o.Overhead = OverheadOptions{Rounds: 1, BatchTime: time.Nanosecond, RealisticRounds: 1,
			Realistic: Rate{FirstToken: 5 * time.Millisecond, Token: time.Millisecond}}
		o.Samples, o.Bursts = 4, 1
	}
	o.Overhead.defaults()
	if o.Samples == 0 {
		o.Samples = 200
	}
	if o.Bursts == 0 {
		o.Bursts = 5
	}
}

// Run measures the figures in a fixed order (counts first, timings last)
// and returns the report. A figure that fails to run is listed in
// Report.Errors; the others still run. Progress lines go to log.
func Run(ctx context.Context, opt Options, log io.Writer) *Report {
	opt.defaults()
	r := newReport()
	start := time.Now()
	figures := []struct {
		id, name string
		run      func() ([]Row, error)
	}{
		{"7", "tool-schema tokens", func() ([]Row, error) { return ToolSchemaTokens(ctx) }},
		{"8", "long conversation", func() ([]Row, error) { return LongConversation(ctx, opt.Quick) }},
		{"6", "message to model", func() ([]Row, error) { return MessageLatency(ctx, opt.Samples, opt.Bursts) }},
		{"1", "engine overhead", func() ([]Row, error) { return EngineOverhead(ctx, opt.Overhead) }},
	}
	rows := map[string][]Row{}
	for _, f := range figures {
		if len(opt.Only) > 0 && !slices.Contains(opt.Only, f.id) {
			continue
		}
		t0 := time.Now()
		fmt.Fprintf(log, "figure %s (%s)...", f.id, f.name)
		got, err := f.run()
		if err != nil {
			fmt.Fprintf(log, " failed: %v\n", err)
			r.Errors = append(r.Errors, fmt.Sprintf("figure %s (%s): %v", f.id, f.name, err))
			continue
		}
		fmt.Fprintf(log, " %.1fs\n", time.Since(t0).Seconds())
		rows[f.id] = got
	}
	for _, id := range []string{"1", "6", "7", "8"} { // the order
		r.Rows = append(r.Rows, rows[id]...)
	}
	r.Duration = time.Since(start).Round(100 * time.Millisecond).String()
	return r
}
