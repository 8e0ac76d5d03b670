package bench

import (
	"context"
	"fmt"
	"github.com/opsgate/opsgate/internal/pgtest"
	"os"
	"runtime"
	"time"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// overheadMax is figure 1's target: engine wall time over direct consumption.
const overheadMax = 1.10

// The scripted 3-turn conversation: a greeting answered in text, then a
// question answered with a tool call and, after its result, in text.
const (
	greeting       = "Hi, I'm on call for checkout today. Anything I should know before we start?"
	question       = "Is anything wrong with the pods in prod?"
	turnsPerConv   = 3
	greetingAnswer = "Nothing is firing for checkout right now. The last incident was two days ago (payments timeouts, resolved by a rollback). Ask me about pods, logs, events, Helm releases, rollouts or Jenkins builds, and I will look before I answer."
	toolAnswer     = "One of the eight pods in prod is unhealthy: checkout-7d4b9c6f5-qs7tn is in CrashLoopBackOff with 14 restarts in 41 minutes. The other checkout pods, payments-api, payments-worker and redis are Running. I can pull its logs or recent events next."
)

// Rate is how fast the fake model streams: the wait before the first chunk
// and between chunks (a chunk is about one token).
type Rate struct {
	FirstToken time.Duration
	Token      time.Duration
}

func (r Rate) String() string {
	if r.Token == 0 && r.FirstToken == 0 {
		return "full speed"
	}
	return fmt.Sprintf("%.0f tok/s, first token %d ms", float64(time.Second)/float64(r.Token), r.FirstToken.Milliseconds())
}

func overheadReply(rate Rate) func(llmfake.Request) llmfake.Reply {
	return func(req llmfake.Request) llmfake.Reply {
		r := llmfake.Reply{FirstTokenDelay: rate.FirstToken, TokenDelay: rate.Token}
		switch last := req.Messages[len(req.Messages)-1]; {
		case last.Role == "tool":
			r.Text = toolAnswer
		case last.Content == greeting:
			r.Text = greetingAnswer
		default:
			r.ToolCalls = []llmfake.ToolCall{{ID: "call_pods", Name: "pods_list_in_namespace", Arguments: `{"namespace":"prod"}`}}
		}
		return r
	}
}

// pair runs the scripted conversation through the engine and directly,
// against one fake model and one MCP server.
type pair struct {
	s *stack
	d *direct
	n int // engine conversations so far, for fresh keys
}

// newPair builds both sides with the SQLite file under dir ("" = TMPDIR)
// and runs one conversation on each, so connections and caches are warm.
func newPair(ctx context.Context, dir, storeURL string, rate Rate) (*pair, error) {
	s, err := newStack(stackConfig{dir: dir, storeURL: storeURL})
	if err != nil {
		return nil, err
	}
	s.llm.SetResponder(overheadReply(rate))
	d, err := newDirect(ctx, s.llm.URL, s.server("k8s").Server)
	if err != nil {
		s.close()
		return nil, err
	}
	p := &pair{s: s, d: d}
	if err := p.engine(ctx); err != nil {
		p.close()
		return nil, err
	}
	if err := p.direct(ctx); err != nil {
		p.close()
		return nil, err
	}
	p.s.store.take()
	return p, nil
}

func (p *pair) close() {
	p.d.close()
	p.s.close()
}

// engine holds one conversation through the engine: two user messages,
// each waited for until its run ended and its events were delivered.
func (p *pair) engine(ctx context.Context) error {
	p.n++
	conv := fmt.Sprintf("overhead:%d", p.n)
	if err := p.s.say(ctx, conv, greeting); err != nil {
		return err
	}
	return p.s.say(ctx, conv, question)
}

func (p *pair) direct(ctx context.Context) error { return p.d.conversation(ctx) }

// batch is n conversations of one side, per conversation.
type batch struct {
	wall   time.Duration
	allocs float64 // process-wide, the fake servers' included
	bytes  float64
}

func measure(ctx context.Context, n int, f func(context.Context) error) (batch, error) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	for range n {
		if err := f(ctx); err != nil {
			return batch{}, err
		}
	}
	wall := time.Since(start)
	runtime.ReadMemStats(&m1)
	return batch{
		wall:   wall / time.Duration(n),
		allocs: float64(m1.Mallocs-m0.Mallocs) / float64(n),
		bytes:  float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n),
	}, nil
}

// overhead is what one configuration of figure 1 measured: medians over
// rounds, each round one batch of each side, in alternating order so that
// drift on a shared machine hits both sides alike.
type overhead struct {
	rate           Rate
	engine, direct batch
	ratio          float64       // median of the rounds' ratios
	store          time.Duration // engine time spent in the store, per conversation
	writes         float64       // store write transactions per conversation
	convs          int           // conversations measured per side
}

func measureOverhead(ctx context.Context, dir, storeURL string, rate Rate, rounds int, batchTime time.Duration) (overhead, error) {
	p, err := newPair(ctx, dir, storeURL, rate)
	if err != nil {
		return overhead{}, err
	}
	defer p.close()
	// Size batches from one timed engine conversation.
	one, err := measure(ctx, 1, p.engine)
	if err != nil {
		return overhead{}, err
	}
	n := max(1, int(batchTime/max(one.wall, time.Microsecond)))
	p.s.store.take()
	o := overhead{rate: rate}
	var ratios, ew, dw, ea, da, eb, db, st, wr []float64
	for r := range rounds {
		var e, d batch
		if r%2 == 0 {
			if e, err = measure(ctx, n, p.engine); err == nil {
				d, err = measure(ctx, n, p.direct)
			}
		} else {
			if d, err = measure(ctx, n, p.direct); err == nil {
				e, err = measure(ctx, n, p.engine)
			}
		}
		if err != nil {
			return overhead{}, err
		}
		storeTime, writes := p.s.store.take()
		ratios = append(ratios, float64(e.wall)/float64(d.wall))
		ew, dw = append(ew, float64(e.wall)), append(dw, float64(d.wall))
		ea, da = append(ea, e.allocs), append(da, d.allocs)
		eb, db = append(eb, e.bytes), append(db, d.bytes)
		st, wr = append(st, float64(storeTime)/float64(n)), append(wr, float64(writes)/float64(n))
		o.convs += n
	}
	o.ratio = median(ratios)
	o.engine = batch{wall: time.Duration(median(ew)), allocs: median(ea), bytes: median(eb)}
	o.direct = batch{wall: time.Duration(median(dw)), allocs: median(da), bytes: median(db)}
	o.store, o.writes = time.Duration(median(st)), median(wr)
	return o, nil
}

// tmpfs returns a RAM-backed directory where fsync costs nothing, or "".
func tmpfs() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "opsgate-bench-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return ""
}

// OverheadOptions size figure 1.
type OverheadOptions struct {
	Rounds    int           // rounds at full speed (default 7)
	BatchTime time.Duration // wall time of one batch at full speed (default 300 ms)
	Realistic Rate          // the realistic rate (default 100 tok/s, first token 200 ms)
	// RealisticRounds: rounds at the realistic rate, one conversation per
	// batch (default 3).
	RealisticRounds int
}

func (o *OverheadOptions) defaults() {
	if o.Rounds == 0 {
		o.Rounds = 7
	}
	if o.BatchTime == 0 {
		o.BatchTime = 300 * time.Millisecond
	}
	if o.Realistic == (Rate{}) {
		o.Realistic = Rate{FirstToken: 200 * time.Millisecond, Token: 10 * time.Millisecond}
	}
	if o.RealisticRounds == 0 {
		o.RealisticRounds = 3
	}
}

// EngineOverhead is figure 1: the scripted 3-turn conversation through the
// whole engine with SQLite (on TMPDIR) against the same scripted stream
// consumed directly with openai-go, the MCP tool called directly too. At
// full stream speed the ratio is the engine's overhead; the store's share
// is measured, and the engine is measured again with SQLite on tmpfs, where
// fsync is free, to say what the rest costs. A realistic stream rate shows
// what the overhead means in practice.
func EngineOverhead(ctx context.Context, opt OverheadOptions) ([]Row, error) {
	opt.defaults()
	fast, err := measureOverhead(ctx, "", "", Rate{}, opt.Rounds, opt.BatchTime)
	if err != nil {
		return nil, err
	}
	var mem *overhead
	if dir := tmpfs(); dir != "" {
		m, err := measureOverhead(ctx, dir, "", Rate{}, opt.Rounds, opt.BatchTime)
		if err != nil {
			return nil, err
		}
		mem = &m
	}
	real, err := measureOverhead(ctx, "", "", opt.Realistic, opt.RealisticRounds, 0)
	if err != nil {
		return nil, err
	}
	pgRows, err := postgresOverhead(ctx, opt)
	if err != nil {
		return nil, err
	}

	perTurn := func(d time.Duration) float64 { return ms(d) / turnsPerConv }
	storeShare := float64(fast.store) / float64(fast.engine.wall)
	withoutStore := float64(fast.engine.wall-fast.store) / float64(fast.direct.wall)
	note := fmt.Sprintf("%d 3-turn conversations per side in %d alternating rounds; engine %.2f ms/turn, direct %.2f ms/turn "+
		"(both include the fake model's own work, in the same process); "+
		"the store: %.0f write transactions per conversation, each a durable SQLite commit (synchronous=FULL, on TMPDIR), "+
		"take %.2f ms = %.0f%% of engine time; engine time minus store time = %.2fx direct",
		fast.convs, opt.Rounds, perTurn(fast.engine.wall), perTurn(fast.direct.wall),
		fast.writes, ms(fast.store), 100*storeShare, withoutStore)
	if mem != nil {
		note += fmt.Sprintf("; with SQLite on tmpfs (fsync free): %.2fx (engine %.2f ms/turn, store %.0f%% of it, engine minus store %.2fx direct)",
			mem.ratio, perTurn(mem.engine.wall), 100*float64(mem.store)/float64(mem.engine.wall),
			float64(mem.engine.wall-mem.store)/float64(mem.direct.wall))
	}
	if fast.ratio > overheadMax {
		// Handle stores each user message durably before it returns, so a
		// conversation of two messages cannot take fewer than two commits.
		perCommit := float64(fast.store) / max(fast.writes, 1)
		floor := 1 + 2*perCommit/float64(fast.direct.wall)
		note += fmt.Sprintf("; cause of the miss: durable commits, %.2f ms each here; the two that store the inbound messages "+
			"(Handle returns only once a message is on disk) alone put the ratio at %.2fx, over the target before the engine does anything else",
			ms(time.Duration(perCommit)), floor)
		if withoutStore > overheadMax {
			note += fmt.Sprintf("; the rest of the engine (events through the outbox goroutine, argument validation, goroutine hand-offs, "+
				"three reads per run) is %.0f%% over direct consumption on its own", 100*(withoutStore-1))
		}
	}
	metrics := func(o overhead) map[string]float64 {
		return map[string]float64{
			"ratio": o.ratio, "engine_ms_per_turn": perTurn(o.engine.wall), "direct_ms_per_turn": perTurn(o.direct.wall),
			"engine_allocs_per_turn": o.engine.allocs / turnsPerConv, "direct_allocs_per_turn": o.direct.allocs / turnsPerConv,
			"engine_bytes_per_turn": o.engine.bytes / turnsPerConv, "direct_bytes_per_turn": o.direct.bytes / turnsPerConv,
			"store_ms_per_turn": perTurn(o.store), "store_writes_per_conversation": o.writes, "conversations": float64(o.convs),
		}
	}
	fm := metrics(fast)
	fm["engine_minus_store_ratio"] = withoutStore
	if mem != nil {
		for k, v := range metrics(*mem) {
			fm["tmpfs_"+k] = v
		}
	}
	return append([]Row{
		{
			Figure:   "1. engine overhead, stream at full speed",
			Measured: fmt.Sprintf("%.2fx (%.2f vs %.2f ms per turn)", fast.ratio, perTurn(fast.engine.wall), perTurn(fast.direct.wall)),
			Target:   fmt.Sprintf("<= %.2fx direct", overheadMax),
			Result:   verdict(fast.ratio <= overheadMax),
			Note:     note,
			Metrics:  fm,
		},
		{
			Figure:   "1. engine overhead, stream at " + real.rate.String(),
			Measured: fmt.Sprintf("%.3fx (%.0f vs %.0f ms per turn)", real.ratio, perTurn(real.engine.wall), perTurn(real.direct.wall)),
			Target:   fmt.Sprintf("<= %.2fx direct", overheadMax),
			Result:   verdict(real.ratio <= overheadMax),
			Note:     fmt.Sprintf("%d conversations per side; the same script, streamed at a realistic model speed", real.convs),
			Metrics:  metrics(real),
		},
		{
			Figure: "1. allocations per turn",
			Measured: fmt.Sprintf("engine %.0f (%.0f KB), direct %.0f (%.0f KB)",
				fast.engine.allocs/turnsPerConv, fast.engine.bytes/turnsPerConv/1024, fast.direct.allocs/turnsPerConv, fast.direct.bytes/turnsPerConv/1024),
			Target: "reported",
			Result: Info,
			Note: fmt.Sprintf("process-wide mallocs per model turn at full speed, so both include the fake model's and the MCP server's; "+
				"the engine adds %.0f allocations per turn", (fast.engine.allocs-fast.direct.allocs)/turnsPerConv),
		},
	}, pgRows...), nil
}

// postgresOverhead is figure 1 again with the PostgreSQL store: a local
// throw-away server with durable commits (fsync on), as replicas use it.
func postgresOverhead(ctx context.Context, opt OverheadOptions) ([]Row, error) {
	cluster, err := pgtest.StartDurable()
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL (for figure 1 on PostgreSQL): %w", err)
	}
	defer cluster.Close()
	url := cluster.URL("postgres")
	fast, err := measureOverhead(ctx, "", url, Rate{}, opt.Rounds, opt.BatchTime)
	if err != nil {
		return nil, err
	}
	real, err := measureOverhead(ctx, "", url, opt.Realistic, opt.RealisticRounds, 0)
	if err != nil {
		return nil, err
	}
	perTurn := func(d time.Duration) float64 { return ms(d) / turnsPerConv }
	return []Row{
		{
			Figure:   "1. engine overhead on PostgreSQL, stream at " + real.rate.String(),
			Measured: fmt.Sprintf("%.3fx (%.0f vs %.0f ms per turn)", real.ratio, perTurn(real.engine.wall), perTurn(real.direct.wall)),
			Target:   fmt.Sprintf("<= %.2fx direct", overheadMax),
			Result:   verdict(real.ratio <= overheadMax),
			Note:     fmt.Sprintf("%d conversations per side; a local PostgreSQL 15 with fsync on, over TCP on 127.0.0.1", real.convs),
			Metrics:  map[string]float64{"ratio": real.ratio},
		},
		{
			Figure:   "1. engine overhead on PostgreSQL, stream at full speed",
			Measured: fmt.Sprintf("%.2fx (%.2f vs %.2f ms per turn)", fast.ratio, perTurn(fast.engine.wall), perTurn(fast.direct.wall)),
			Target:   fmt.Sprintf("<= %.2fx direct", overheadMax),
			Result:   verdict(fast.ratio <= overheadMax),
			Note: fmt.Sprintf("%d conversations per side; %.0f write transactions per conversation take %.2f ms = %.0f%% of engine time",
				fast.convs, fast.writes, ms(fast.store), 100*float64(fast.store)/float64(fast.engine.wall)),
			Metrics: map[string]float64{"ratio": fast.ratio, "store_ms_per_turn": perTurn(fast.store)},
		},
	}, nil
}
