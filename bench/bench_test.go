package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The Benchmark functions are the plain `go test -bench` path to the same
// measurements as the report (cmd/opsgate-bench), one figure at a time:
//
//	go test -run '^$' -bench . -benchmem ./bench/
//
// They report per-turn and per-message numbers with b.ReportMetric; the
// pass/miss verdicts and the ratios measured in alternating rounds are the
// report's.

func benchPair(b *testing.B, dir string) *pair {
	b.Helper()
	p, err := newPair(context.Background(), dir, "", Rate{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.close)
	return p
}

// BenchmarkEngineConversation is figure 1's engine side: one op is the
// scripted 3-turn conversation through the engine with SQLite on TMPDIR.
func BenchmarkEngineConversation(b *testing.B) {
	benchConversation(b, benchPair(b, "").engine)
}

// BenchmarkEngineConversationTmpfs is the same with SQLite on tmpfs, where
// fsync costs nothing.
func BenchmarkEngineConversationTmpfs(b *testing.B) {
	dir := tmpfs()
	if dir == "" {
		b.Skip("no tmpfs at /dev/shm")
	}
	benchConversation(b, benchPair(b, dir).engine)
}

// BenchmarkDirectConversation is figure 1's baseline: the same script
// consumed directly with openai-go and mcp-go.
func BenchmarkDirectConversation(b *testing.B) {
	benchConversation(b, benchPair(b, "").direct)
}

func benchConversation(b *testing.B, f func(context.Context) error) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if err := f(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*turnsPerConv), "ns/turn")
}

// BenchmarkMessageToModel is figure 6's first half: one op is one message,
// from Engine.Handle to the model receiving its request.
func BenchmarkMessageToModel(b *testing.B) {
	s, err := newLatencyStack(0, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.close)
	b.ResetTimer()
	var lat []time.Duration
	for b.Loop() {
		d, err := messageToModel(context.Background(), s, 1)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d...)
	}
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99-ms")
}

// BenchmarkBurstFirstText is figure 6's second half: one op is 20 new
// conversations at once against a model whose first token takes 100 ms.
func BenchmarkBurstFirstText(b *testing.B) {
	s, err := newLatencyStack(burstFirstToken, burstTokenDelay)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.close)
	b.ResetTimer()
	var first []time.Duration
	round := 0
	for b.Loop() {
		f, _, err := burst(context.Background(), s, round, burstSize)
		if err != nil {
			b.Fatal(err)
		}
		round++
		first = append(first, f...)
	}
	b.ReportMetric(ms(percentile(first, 50)), "p50-first-text-ms")
	b.ReportMetric(ms(percentile(first, 99)), "p99-first-text-ms")
}

// BenchmarkToolSchemaTokens reports figure 7's counts; they do not depend
// on b.N.
func BenchmarkToolSchemaTokens(b *testing.B) {
	var rows []Row
	for b.Loop() {
		var err error
		if rows, err = ToolSchemaTokens(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	m := rows[0].Metrics
	b.ReportMetric(m["default_tokens"], "default-tokens")
	b.ReportMetric(m["all_loaded_tokens"], "all-loaded-tokens")
	b.ReportMetric(100*m["default_share"], "default-%")
}

// BenchmarkLongConversation reports figure 8's counts: one op is a
// 100-turn conversation (and one without windowing, for scale).
func BenchmarkLongConversation(b *testing.B) {
	var rows []Row
	for b.Loop() {
		var err error
		if rows, err = LongConversation(context.Background(), false); err != nil {
			b.Fatal(err)
		}
	}
	for _, t := range []int{10, 50, 100} {
		b.ReportMetric(rows[0].Metrics[fmt.Sprintf("turn%d_message_tokens", t)], fmt.Sprintf("t%d-tokens", t))
	}
}
