package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/postgres"
)

// BenchmarkSearchDocuments is memory retrieval's full-text search at 10,000
// and 100,000 documents of generated operations text, with queries of 3, 10
// and 25 terms drawn as the documents' words are (the corpus and queries of
// memory/sqlite's benchmark, so the figures compare). Besides ns/op it
// reports the 50th and 99th percentile of one search, in milliseconds (the
// target is p99 ≤ 20 ms at 100,000 documents).
//
//	go test ./memory/postgres -run '^$' -bench SearchDocuments -benchtime 400x
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
func benchSearch(b *testing.B, s *postgres.Store, terms int) {
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
	b.ReportMetric(float64(matched)/float64(i), "matches/op")
}

// benchScopes is what one conversation in a channel sees.
var benchScopes = []docs.Scope{docs.WorkspaceScope, {Kind: docs.Channel, Key: "slack:T1:C0"},
	{Kind: docs.User, Key: "u0"}, {Kind: docs.Conversation, Key: "slack:T1:C0:1.0"}}

// seedDocuments opens a store holding n generated documents. They are
// copied straight into memory_docs over two connections (the search column
// is computed as the rows arrive, which is most of the time), then the
// table is vacuumed and analysed and memory_lexemes counted, as the store
// keeps it when it saves.
func seedDocuments(b *testing.B, n int) *postgres.Store {
	b.Helper()
	start := time.Now()
	url := pgtest.DB(b)
	s := openStore(b, url)
	g := newCorpus(1)
	at := time.Now().UTC().Truncate(time.Microsecond)
	rows := make([][]any, n)
	for i := range rows {
		d := g.document(i)
		tags, _ := json.Marshal(d.Tags)
		ents, _ := json.Marshal(d.Entities)
		var kw []string
		for _, v := range append(slices.Clone(d.Tags), d.Entities["service"]...) {
			kw = append(kw, v, strings.ReplaceAll(v, "-", " "))
		}
		updated := at.Add(-time.Duration(g.r.IntN(365*24)) * time.Hour)
		rows[i] = []any{fmt.Sprintf("d%07d", i), string(d.Scope.Kind), d.Scope.Key, d.Path, d.Title, d.Content,
			string(d.Type), string(tags), string(ents), strings.Join(kw, " "), string(d.Status), string(d.Trust),
			"{}", "cli:bench", 1, docs.Hash(d.Content), updated, updated}
	}
	cols := []string{"id", "scope_kind", "scope_key", "path", "title", "content", "type", "tags", "entities",
		"keywords", "status", "trust", "source", "author", "version", "sha256", "created_at", "updated_at"}
	ctx := b.Context()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for part := range errs {
		wg.Go(func() {
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				errs[part] = err
				return
			}
			defer conn.Close(context.WithoutCancel(ctx))
			_, errs[part] = conn.CopyFrom(ctx, pgx.Identifier{"memory_docs"}, cols, pgx.CopyFromRows(rows[part*n/2:(part+1)*n/2]))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, sql := range []string{
		`VACUUM ANALYZE memory_docs`,
		`INSERT INTO memory_lexemes (lexeme, ndocs)
			SELECT lexeme, count(*) FROM memory_docs, unnest(tsvector_to_array(search)) AS lexeme GROUP BY lexeme
			UNION ALL SELECT '', count(*) FROM memory_docs`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
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
