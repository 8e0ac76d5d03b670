package sqlite_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// BenchmarkSearchDocuments is memory retrieval's full-text search at 10,000
// and 100,000 documents of generated operations text, with queries of 3, 10
// and 25 terms drawn as the documents' words are (so most queries hold
// words that a good part of the documents have). Besides ns/op it reports
// the 50th and 99th percentile of one search in milliseconds (the target
// is p99 ≤ 20 ms at 100,000 documents), the process's CPU time per search
// (what a busy machine stretches the wall-clock figures from), and the
// matches returned. Seeding 100,000 documents takes about a minute.
//
//	go test ./memory/sqlite -run '^$' -bench SearchDocuments -benchtime 2000x
func BenchmarkSearchDocuments(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			s := seedDocuments(b, n)
			for _, terms := range []int{3, 10, 25} {
				b.Run(fmt.Sprintf("terms=%d", terms), func(b *testing.B) {
					benchSearch(b, s, terms)
				})
			}
		})
	}
}

// benchSearch runs queries of terms words, cycling through a fixed set.
func benchSearch(b *testing.B, s *sqlite.Store, terms int) {
	g := newCorpus(uint64(terms))
	queries := make([]docs.Query, 256)
	for i := range queries {
		queries[i] = docs.Query{Terms: g.distinctWords(terms), Scopes: benchScopes, Limit: 18}
	}
	ctx := b.Context()
	var took []time.Duration
	matched := 0
	i := 0
	b.ReportAllocs()
	cpu := processCPU()
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
	cpu = processCPU() - cpu
	slices.Sort(took)
	pct := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))]) / 1e6
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/1e6/float64(i), "cpu-ms/op")
	}
	b.ReportMetric(float64(matched)/float64(i), "matches/op")
}

// benchScopes is what one conversation in a channel sees.
var benchScopes = []docs.Scope{docs.WorkspaceScope, {Kind: docs.Channel, Key: "slack:T1:C0"},
	{Kind: docs.User, Key: "u0"}, {Kind: docs.Conversation, Key: "slack:T1:C0:1.0"}}

// seedDocuments opens a store holding n generated documents, created in
// one transaction.
func seedDocuments(b *testing.B, n int) *sqlite.Store {
	b.Helper()
	start := time.Now()
	s := open(b, filepath.Join(b.TempDir(), "opsgate.db"))
	g := newCorpus(1)
	ds := make([]docs.Document, n)
	for i := range ds {
		ds[i] = g.document(i)
	}
	// The first alone prepares the writer's statements for the rest.
	if _, err := s.SaveDocument(b.Context(), ds[0], docs.Save{}); err != nil {
		b.Fatal(err)
	}
	if err := s.CreateDocumentsInOneTx(b.Context(), ds[1:], "seeded"); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d documents in %v", n, time.Since(start).Round(time.Millisecond))
	return s
}

// corpus generates operations text: words of a fixed vocabulary of a few
// thousand, drawn with a Zipf distribution (a few words are in most
// documents, most words in few).
type corpus struct {
	r    *rand.Rand
	zipf *rand.Zipf
}

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 42))
	return &corpus{r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(vocabulary)-1))}
}

func (c *corpus) word() string { return vocabulary[c.zipf.Uint64()] }

// distinctWords returns n different words.
func (c *corpus) distinctWords(n int) []string {
	var ws []string
	for len(ws) < n {
		if w := c.word(); !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	return ws
}

// document i: 150 to 300 words of content in sentences, a title, tags and
// a service; nine in ten in the workspace, the rest in channels and users.
func (c *corpus) document(i int) docs.Document {
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
		Title:    strings.Join(c.distinctWords(3+c.r.IntN(4)), " "),
		Content:  b.String(),
		Type:     docs.Runbook,
		Tags:     c.distinctWords(2),
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
