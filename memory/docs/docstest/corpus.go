package docstest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
)

// BenchScopes is what one conversation in a channel sees.
var BenchScopes = []docs.Scope{docs.WorkspaceScope, {Kind: docs.Channel, Key: "slack:T1:C0"},
	{Kind: docs.User, Key: "u0"}, {Kind: docs.Conversation, Key: "slack:T1:C0:1.0"}}

// BenchSearchSizes is the stores' search benchmark: seed stores of 10,000
// and 100,000 generated documents and run BenchSearch on each with queries
// of 3, 10 and 25 terms, so both stores' figures compare.
func BenchSearchSizes[S docs.Store](b *testing.B, seed func(b *testing.B, n int) S, cpu func() time.Duration) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			s := seed(b, n)
			for _, terms := range []int{3, 10, 25} {
				b.Run(fmt.Sprintf("terms=%d", terms), func(b *testing.B) {
					BenchSearch(b, s, terms, cpu)
				})
			}
		})
	}
}

// BenchSearch runs s's full-text search with queries of terms words drawn
// as the documents' words are (so most queries hold words that a good part
// of the documents have), cycling through a fixed set. Besides ns/op it
// reports the 50th and 99th percentile of one search in milliseconds, the
// CPU time per search when cpu is given (what a busy machine stretches the
// wall-clock figures from), and the matches returned.
func BenchSearch(b *testing.B, s docs.Store, terms int, cpu func() time.Duration) {
	g := NewCorpus(uint64(terms))
	queries := make([]docs.Query, 256)
	for i := range queries {
		queries[i] = docs.Query{Terms: g.Words(terms), Scopes: BenchScopes, Limit: 18}
	}
	ctx := b.Context()
	var took []time.Duration
	matched := 0
	i := 0
	b.ReportAllocs()
	var cpu0 time.Duration
	if cpu != nil {
		cpu0 = cpu()
	}
	for b.Loop() {
		start := time.Now()
		ms, err := s.SearchDocuments(ctx, queries[i%len(queries)])
		took = append(took, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		matched += len(ms)
		i++
	}
	slices.Sort(took)
	pct := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))]) / 1e6
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	if cpu != nil {
		if used := cpu() - cpu0; used > 0 {
			b.ReportMetric(float64(used)/1e6/float64(i), "cpu-ms/op")
		}
	}
	b.ReportMetric(float64(matched)/float64(i), "matches/op")
}

// Corpus generates operations text for the stores' search benchmarks:
// words of a fixed vocabulary of a few thousand, drawn with a Zipf
// distribution (a few words are in most documents, most words in few), so
// both stores are measured on the same documents and queries.
type Corpus struct {
	r    *rand.Rand
	zipf *rand.Zipf
}

// NewCorpus returns a generator; the same seed gives the same text.
func NewCorpus(seed uint64) *Corpus {
	r := rand.New(rand.NewPCG(seed, 42))
	return &Corpus{r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(vocabulary)-1))}
}

// Rand is the generator's source, for a caller's other choices.
func (c *Corpus) Rand() *rand.Rand { return c.r }

func (c *Corpus) word() string { return vocabulary[c.zipf.Uint64()] }

// Words returns n different words, as a query's terms.
func (c *Corpus) Words(n int) []string {
	var ws []string
	for len(ws) < n {
		if w := c.word(); !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	return ws
}

// Document i: 150 to 300 words of content in sentences, a title, tags and
// a service; nine in ten in the workspace, the rest in channels and users.
func (c *Corpus) Document(i int) docs.Document {
	var b strings.Builder
	for n, words := 0, 150+c.r.IntN(151); n < words; n++ {
		if n > 0 {
			if c.r.IntN(12) == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(c.word())
	}
	b.WriteByte('.')
	scope := docs.WorkspaceScope
	switch c.r.IntN(20) {
	case 0:
		scope = docs.Scope{Kind: docs.Channel, Key: fmt.Sprintf("slack:T1:C%d", c.r.IntN(50))}
	case 1:
		scope = docs.Scope{Kind: docs.User, Key: fmt.Sprintf("u%d", c.r.IntN(200))}
	}
	status := docs.Active
	if c.r.IntN(10) == 0 {
		status = docs.Draft
	}
	return docs.Document{
		Scope:    scope,
		Path:     fmt.Sprintf("generated/%06d.md", i),
		Title:    strings.Join(c.Words(3+c.r.IntN(4)), " "),
		Content:  b.String(),
		Type:     docs.Runbook,
		Tags:     c.Words(2),
		Entities: map[string][]string{"service": {c.word() + "-" + c.word()}},
		Status:   status,
		Trust:    docs.AdminApproved,
	}
}

// vocabulary is about 4,000 words: operations words first (the frequent
// ones), then made-up words standing for names, hosts and jargon.
var vocabulary = func() []string {
	ops := strings.Fields(`pod pods service deploy deployment restart restarts error errors latency
		node nodes cluster namespace container image rollout rollback release helm chart config
		configmap secret ingress egress dns certificate cert tls timeout retry retries queue
		kafka consumer producer lag partition broker topic redis cache postgres database replica
		primary failover backup restore snapshot volume disk memory cpu oom oomkilled limit limits
		request requests throttling autoscaler hpa replicas scale scaling traffic load balancer
		gateway proxy nginx envoy istio mesh sidecar metrics alert alerts alertmanager prometheus
		grafana dashboard logs logging loki trace tracing tempo span incident outage degraded
		healthcheck readiness liveness probe crashloop backoff pending evicted scheduler taint
		toleration affinity quota storage bucket s3 iam role policy permission token auth oauth
		login session user users customer payment payments checkout order orders ledger billing
		invoice api endpoint http grpc status code 500 502 503 504 429 connection connections pool
		socket port network vpc subnet firewall rule route table peering region zone eu us west east
		prod production staging canary blue green feature flag rollout pipeline jenkins argo build
		test tests merge commit branch tag version upgrade downgrade migration schema index query
		slow lock deadlock vacuum bloat wal archive checkpoint lag replication stream cdc etl job
		jobs cron schedule batch worker workers thread threads heap gc pause jvm golang python node
		runtime panic exception stack trace oncall pager escalation runbook playbook postmortem
		mitigation root cause fix hotfix patch revert drain cordon upgrade kernel os ami terraform
		ansible vault rotate rotation expiry expired renew renewal webhook callback notification
		email sms slack channel thread mention approve approval change window freeze maintenance
		customer impact sla slo sli error budget burn rate availability uptime capacity headroom
		throughput bandwidth packet loss jitter mtu tcp udp handshake reset refused unreachable`)
	syll := strings.Fields("ka lo mi ra tu ve sa no pe zi qua dor fin gar hel jun kel mor nar pol")
	seen := map[string]bool{}
	var vocab []string
	for _, w := range ops {
		if !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	for len(vocab) < 4000 {
		w := ""
		for range 2 + r.IntN(3) {
			w += syll[r.IntN(len(syll))]
		}
		if !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return vocab
}()
