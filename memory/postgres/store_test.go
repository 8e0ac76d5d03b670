package postgres_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/storetest"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens url's store for a test or a benchmark, closed when it ends.
func open(tb testing.TB, url string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(tb.Context(), url)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// The same conformance suite as memory/sqlite, in full.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.Store { return open(t, pgtest.DB(t)) })
}

// UPDATE, DELETE and TRUNCATE of the audit log fail, whoever runs them.
func TestAuditRejectsUpdateDeleteTruncate(t *testing.T) {
	url := pgtest.DB(t)
	s := open(t, url)
	ctx := t.Context()
	appr := core.Approval{ID: "a1", RunID: "r1", ConvKey: "c", Status: core.ApprovalPending, Arguments: []byte(`{}`)}
	if err := s.Apply(ctx, core.Batch{Approvals: []core.Approval{appr}, Audit: []core.AuditEntry{{Kind: core.AuditProposed, ConvKey: "c"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddVote(ctx, "a1", core.Vote{Person: "alice", Approve: true}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{
		`UPDATE audit SET detail = 'edited'`,
		`DELETE FROM audit`,
		`TRUNCATE audit`,
		`UPDATE approval_votes SET reason = 'edited'`,
		`DELETE FROM approval_votes`,
		`TRUNCATE approval_votes`,
	} {
		_, err := conn.Exec(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want an append-only error", stmt, err)
		}
	}
	es, err := s.Audit(ctx, core.AuditFilter{})
	if err != nil || len(es) != 1 || es[0].Detail != "" {
		t.Fatalf("audit after the attempts = %+v, %v; want the one entry unchanged", es, err)
	}
}

// A dropped or disabled trigger makes the store refuse to open.
func TestOpenRefusesUnprotectedAudit(t *testing.T) {
	for _, alter := range []string{
		`DROP TRIGGER audit_no_truncate ON audit`,
		`ALTER TABLE audit DISABLE TRIGGER audit_append_only`,
		`DROP TRIGGER memory_versions_append_only ON memory_versions`,
	} {
		url := pgtest.DB(t)
		open(t, url).Close()
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(t.Context(), alter); err != nil {
			t.Fatal(err)
		}
		conn.Close(t.Context())
		_, err = postgres.Open(t.Context(), url)
		var se *core.SchemaError
		if !errors.As(err, &se) || !se.Audit {
			t.Errorf("Open after %q: err = %v, want a *core.SchemaError about the audit log", alter, err)
		}
	}
}

// Replicas starting together migrate once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	url := pgtest.DB(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(context.Background(), url)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open: %v", err)
		}
	}
	s := open(t, url)
	if applied, err := s.Migrate(t.Context()); err != nil || len(applied) != 0 {
		t.Fatalf("Migrate after Open = %v, %v; want nothing to apply", applied, err)
	}
}

func TestLeases(t *testing.T) {
	url := pgtest.DB(t)
	storetest.RunLeases(t, open(t, url), open(t, url))
}

// A lease is lost when the server goes away, and free again for another
// holder when its holder's connection ends.
func TestLeaseLostWhenItsConnectionDies(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, url), open(t, url)
	l, ok, err := a.TryLease(t.Context(), "telegram:1")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	// Kill the lease's backend as a dead replica's would end.
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the lease was not reported lost after its connection died")
	}
	l2, ok, err := b.TryLease(t.Context(), "telegram:1")
	if err != nil || !ok {
		t.Fatalf("TryLease after the holder died = %v, %v", ok, err)
	}
	l2.Release()
	l.Release()
}
