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
	// Only lists the figures to run ("1" to "13"); empty runs all.
	Only []string
	// Quick shrinks every figure to a smoke test: the numbers mean nothing,
	// but every code path runs.
	Quick bool
	// Overhead sizes figure 1.
	Overhead OverheadOptions
	// Samples is figure 6's number of sequential messages (default 200) and
	// Bursts its number of 20-conversation bursts (default 5).
	Samples, Bursts int
	// FirstPosts is figure 2's number of replies (default 160), one
	// started every FirstPostEvery (default 150 ms).
	FirstPosts     int
	FirstPostEvery time.Duration
	// Streams is figure 3's number of replies (default 5) and StreamChunks
	// their length in tokens (default 200).
	Streams, StreamChunks int
	// Load sizes figure 4.
	Load LoadOptions
	// Starts is figure 5's number of starts of `opsgate serve` (default 5).
	Starts int
	// Kills is figure 9's number of kill -9 takeovers (default 5) and
	// StoreConversations the conversations streaming when its PostgreSQL
	// restarts (default 20).
	Kills, StoreConversations int
	// Memory sizes figure 10.
	Memory MemoryOptions
	// APIStreams sizes figure 11.
	APIStreams StreamsOptions
	// Side sizes figure 12 and names its baseline revision.
	Side SideOptions
	// PreviewCalls is figure 13's number of approval requests on each side
	// (default 50).
	PreviewCalls int
	// Binary is a built cmd/opsgate for figures 4, 5 and 9; empty builds one
	// into a temporary directory.
	Binary string
}

func (o *Options) defaults() {
	if o.Quick {
		o.Overhead = OverheadOptions{Rounds: 1, BatchTime: time.Nanosecond, RealisticRounds: 1,
			Realistic: Rate{FirstToken: 5 * time.Millisecond, Token: time.Millisecond}}
		o.Samples, o.Bursts = 4, 1
		o.FirstPosts, o.FirstPostEvery = 4, 50*time.Millisecond
		o.Streams, o.StreamChunks = 1, 40
		o.Load = LoadOptions{Conversations: 20, Chunks: 20}
		o.Starts, o.Kills, o.StoreConversations = 1, 1, 2
		o.Side = SideOptions{Baseline: o.Side.Baseline, Rounds: 1, Messages: 2}
		o.Memory = MemoryOptions{Sizes: []int{400, 800}, Searches: 20, Prepares: 20}
		o.PreviewCalls = 3
		o.APIStreams = StreamsOptions{Followers: 10, Tokens: 20, TokenDelay: time.Millisecond, Rounds: 1, Idle: 50,
			RenderRounds: 1, RenderReplies: 1, RenderPostChunks: 10, RenderStreams: 1, RenderChunks: 20}
	}
	o.Overhead.defaults()
	o.Load.defaults()
	o.Memory.defaults()
	o.APIStreams.defaults()
	if o.FirstPosts == 0 {
		o.FirstPosts = 160
	}
	if o.FirstPostEvery == 0 {
		o.FirstPostEvery = firstPostEvery
	}
	if o.Streams == 0 {
		o.Streams = 5
	}
	if o.StreamChunks == 0 {
		o.StreamChunks = streamChunks
	}
	if o.Starts == 0 {
		o.Starts = 5
	}
	if o.PreviewCalls == 0 {
		o.PreviewCalls = 50
	}
	if o.Kills == 0 {
		o.Kills = 5
	}
	if o.StoreConversations == 0 {
		o.StoreConversations = 20
	}
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
	bin := &binary{path: opt.Binary}
	defer bin.close()
	figures := []struct {
		id, name string
		run      func() ([]Row, error)
	}{
		{"7", "tool-schema tokens", func() ([]Row, error) { return ToolSchemaTokens(ctx) }},
		{"8", "long conversation", func() ([]Row, error) { return LongConversation(ctx, opt.Quick) }},
		{"6", "message to model", func() ([]Row, error) { return MessageLatency(ctx, opt.Samples, opt.Bursts) }},
		{"1", "engine overhead", func() ([]Row, error) { return EngineOverhead(ctx, opt.Overhead) }},
		{"3", "calls per streamed reply", func() ([]Row, error) { return StreamedReplyCalls(ctx, opt.Streams, opt.StreamChunks) }},
		{"2", "first token to first post", func() ([]Row, error) { return FirstPostLatency(ctx, opt.FirstPosts, opt.FirstPostEvery) }},
		{"5", "idle cost and start-up", func() ([]Row, error) { return Startup(ctx, bin, opt.Starts) }},
		{"4", "one bot token under load", func() ([]Row, error) { return Load(ctx, bin, opt.Load) }},
		{"9", "poller takeover after kill -9, answers after a PostgreSQL restart", func() ([]Row, error) {
			rows, err := Takeover(ctx, bin, opt.Kills)
			if err != nil {
				return nil, err
			}
			more, err := StoreRestart(ctx, bin, opt.StoreConversations)
			return append(rows, more...), err
		}},
		{"10", "memory retrieval", func() ([]Row, error) { return MemoryRetrieval(ctx, opt.Memory) }},
		{"11", "API streams", func() ([]Row, error) { return APIStreams(ctx, opt.APIStreams) }},
		{"12", "side by side with the baseline", func() ([]Row, error) { return SideBySide(ctx, bin, opt.Side) }},
		{"13", "approval card with a preview", func() ([]Row, error) { return PreviewLatency(ctx, opt.PreviewCalls) }},
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
	for _, id := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13"} { // the order
		r.Rows = append(r.Rows, rows[id]...)
	}
	r.Duration = time.Since(start).Round(100 * time.Millisecond).String()
	return r
}
