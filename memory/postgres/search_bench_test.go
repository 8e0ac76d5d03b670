package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/docs/docstest"
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
	docstest.BenchSearchSizes(b, seedDocuments, nil)
}

// seedDocuments opens a store holding n generated documents. They are
// copied straight into memory_docs over two connections (the search column
// is computed as the rows arrive, which is most of the time), then the
// table is vacuumed and analysed and memory_lexemes counted, as the store
// keeps it when it saves.
func seedDocuments(b *testing.B, n int) *postgres.Store {
	b.Helper()
	start := time.Now()
	url := pgtest.DB(b)
	s := open(b, url)
	g := docstest.NewCorpus(1)
	at := time.Now().UTC().Truncate(time.Microsecond)
	rows := make([][]any, n)
	for i := range rows {
		d := g.Document(i)
		tags, _ := json.Marshal(d.Tags)
		ents, _ := json.Marshal(d.Entities)
		var kw []string
		for _, v := range append(slices.Clone(d.Tags), d.Entities["service"]...) {
			kw = append(kw, v, strings.ReplaceAll(v, "-", " "))
		}
		updated := at.Add(-time.Duration(g.Rand().IntN(365*24)) * time.Hour)
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
