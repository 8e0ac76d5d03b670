package redact

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// toolResult1MB is about 1 MiB of what tools return: kubectl tables, pod
// logs, JSON logs, manifests and a ConfigMap, with a few secrets (a
// Secret, an env dump with a password and a key, a kubeconfig).
func toolResult1MB(tb testing.TB) string {
	rng := rand.New(rand.NewPCG(1, 1))
	var b strings.Builder
	ordinary := ordinaryDocs(tb)
	secrets := []string{toolResultDoc().text, jsonSecretDoc().text, kubeconfigDoc().text}
	for i := 0; b.Len() < 1<<20; i++ {
		switch i % 50 {
		case 0:
			b.WriteString(ordinary[rng.IntN(len(ordinary))].text)
		case 25:
			b.WriteString(secrets[rng.IntN(len(secrets))])
		default:
			fmt.Fprintf(&b, "2024-05-14T16:%02d:%02d.%03dZ INFO  handled request id=%08x path=/v1/orders/%d status=200 duration=%dms user=u%04d\n",
				rng.IntN(60), rng.IntN(60), rng.IntN(1000), rng.Uint32(), rng.IntN(1e6), rng.IntN(900), rng.IntN(1e4))
		}
	}
	return b.String()
}

// opsgateRedactor is configured as a deployment would be: a few tokens of
// its own and one user pattern.
func opsgateRedactor(tb testing.TB) *Redactor {
	return mustNew(tb, Options{
		Patterns: []string{`corp-[A-Za-z0-9]{24}`},
		Secrets:  []string{"7412589630:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "xoxb-2501234567890-2512345678901-AbCdEfGhIjKl", "8f14e45fceea167a5a36dedd4bea2543"},
	})
}

// BenchmarkRedactToolResult1MB: throughput of String on a 1 MiB tool result.
func BenchmarkRedactToolResult1MB(b *testing.B) {
	r := opsgateRedactor(b)
	text := toolResult1MB(b)
	if !strings.Contains(r.String(text), "[REDACTED:k8s_secret_data]") {
		b.Fatal("the benchmark text has no redacted secret")
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r.String(text)
	}
}

// BenchmarkStreamPerToken: the latency a Stream adds to each token of a
// 200-token reply (a few bytes each, as models stream), reported as p99.
func BenchmarkStreamPerToken(b *testing.B) {
	r := opsgateRedactor(b)
	reply := chatDoc().text + "The api pod restarted because its liveness probe on :8080/healthz timed out; " +
		"roll back with kubectl rollout undo deployment/api -n prod and set DB_PASSWORD=hunter2hunter2 again.\n"
	rng := rand.New(rand.NewPCG(2, 2))
	var tokens []string
	for rest := reply; len(rest) > 0 && len(tokens) < 199; {
		n := min(1+rng.IntN(6), len(rest))
		tokens, rest = append(tokens, rest[:n]), rest[n:]
	}
	tokens = append(tokens, reply[len(strings.Join(tokens, "")):])
	var lat []time.Duration
	for b.Loop() {
		s := r.Stream()
		for _, tok := range tokens {
			t0 := time.Now()
			s.Write(tok)
			lat = append(lat, time.Since(t0))
		}
		s.Flush()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns/token")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/token")
}
