package sqlite_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/storetest"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// open opens the store at path and closes it when t ends.
func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// raw opens path with plain database/sql, around the Store, to look at
// what the Store cannot show.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.Store {
		return open(t, filepath.Join(t.TempDir(), "opsgate.db"))
	})
}

func TestOpenCreatesDirectoryInWALMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "opsgate.db")
	s := open(t, path)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file: %v", err)
	}
	var mode string
	if err := raw(t, path).QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

func TestOpenRejectsPathsThatAreNotFiles(t *testing.T) {
	for _, p := range []string{"", ":memory:", filepath.Join(t.TempDir(), "x.db?mode=memory")} {
		if s, err := sqlite.Open(t.Context(), p); err == nil {
			s.Close()
			t.Errorf("Open(%q): err = nil, want an error", p)
		}
	}
}

func TestMigrateIdempotentAndVersioned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opsgate.db")
	s := open(t, path)
	v, err := s.SchemaVersion(t.Context())
	if err != nil {
		t.Fatalf("SchemaVersion: %v", err)
	}
	if v != 15 {
		t.Errorf("SchemaVersion after Open = %d, want 15", v)
	}
	for i := range 2 {
		applied, err := s.Migrate(t.Context())
		if err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
		if len(applied) != 0 {
			t.Errorf("Migrate #%d of a current database applied %v, want nothing", i+1, applied)
		}
	}
	rows, err := raw(t, path).Query(`SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if d := cmp.Diff([]string{"0001_init", "0002_inbound_done", "0003_conversation_activity", "0004_approval_votes", "0005_audit_chain", "0006_schedule_fires", "0007_run_seqs", "0008_memory_docs", "0009_memory_search", "0010_api_tokens", "0011_events", "0012_idempotency", "0013_token_scopes", "0014_incidents", "0015_approval_preview"}, got); d != "" {
		t.Errorf("schema_migrations (-want +got):\n%s", d)
	}
	// Reopening does not apply anything again either.
	s.Close()
	s2 := open(t, path)
	if v, err := s2.SchemaVersion(t.Context()); err != nil || v != 15 {
		t.Errorf("SchemaVersion after reopening = %d, %v; want 15, nil", v, err)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opsgate.db")
	open(t, path).Close()
	if _, err := raw(t, path).Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, '0099_future', 0)`); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a database from a newer opsgate: err = nil, want an error")
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open error = %q, want it to say the schema is newer", err)
	}
}

func TestAuditRejectsUpdateAndDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opsgate.db")
	s := open(t, path)
	e := core.AuditEntry{Time: time.Now(), Kind: core.AuditApproved, ConvKey: "c", RunID: "r", ApprovalID: "a", Actor: core.Actor{ID: "U2"}}
	if err := s.Apply(t.Context(), core.Batch{Audit: []core.AuditEntry{e}}); err != nil {
		t.Fatal(err)
	}
	want, err := s.Audit(t.Context(), core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	db := raw(t, path)
	for _, stmt := range []string{
		`UPDATE audit SET kind = 'denied'`,
		`UPDATE audit SET actor_id = 'U666' WHERE id = 1`,
		`DELETE FROM audit WHERE id = 1`,
		`DELETE FROM audit`,
		`INSERT OR REPLACE INTO audit (id, time, kind, conv_key, run_id, approval_id, actor_id, actor_name, toolset, tool, action_hash, risk, duration_ns, detail)
			VALUES (1, 0, 'denied', 'c', 'r', 'a', 'U666', '', '', '', '', '', 0, '')`,
		`INSERT INTO audit (id, time, kind, conv_key, run_id, approval_id, actor_id, actor_name, toolset, tool, action_hash, risk, duration_ns, detail)
			VALUES (1, 0, 'denied', 'c', 'r', 'a', 'U666', '', '', '', '', '', 0, '')
			ON CONFLICT (id) DO UPDATE SET kind = excluded.kind`,
		`UPDATE OR REPLACE audit SET id = 2 WHERE id = 1`,
	} {
		_, err := db.Exec(stmt)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want the append-only trigger to reject it", stmt, err)
		}
	}
	got, err := s.Audit(t.Context(), core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("audit log changed (-before +after):\n%s", d)
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "opsgate.db")
	s := open(t, path)
	const conv = "terminal:alice"
	now := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := s.SaveInbound(ctx, core.Inbound{ConvKey: conv, MessageID: "m1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	msgs := []core.Message{{Role: core.RoleUser, Content: "hi", Time: now}, {Role: core.RoleAssistant, Content: "hello", Time: now}}
	if err := s.Apply(ctx, core.Batch{ConvKey: conv, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	run := core.Run{ID: "r1", ConvKey: conv, Status: core.RunAwaitingApproval, StartedAt: now}
	if err := s.Apply(ctx, core.Batch{CreateRun: &run}); err != nil {
		t.Fatal(err)
	}
	cp := core.Checkpoint{RunID: "r1", ConvKey: conv, Iteration: 2, CreatedAt: now}
	if err := s.Apply(ctx, core.Batch{Checkpoint: &cp}); err != nil {
		t.Fatal(err)
	}
	appr := core.Approval{ID: "a1", RunID: "r1", ConvKey: conv, Status: core.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := s.Apply(ctx, core.Batch{Approvals: []core.Approval{appr}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, core.Batch{Audit: []core.AuditEntry{{Time: now, Kind: core.AuditProposed, ConvKey: conv}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	if first, err := s.SaveInbound(ctx, core.Inbound{ConvKey: conv, MessageID: "m1", Text: "hi"}); err != nil || first {
		t.Errorf("SaveInbound of m1 after reopening = %v, %v; want false, nil", first, err)
	}
	check := func(what string, want any, got any, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s after reopening: %v", what, err)
			return
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s after reopening (-want +got):\n%s", what, d)
		}
	}
	gotMsgs, err := s.Messages(ctx, conv)
	check("Messages", msgs, gotMsgs, err)
	gotRun, err := s.Run(ctx, "r1")
	check("Run", run, gotRun, err)
	gotCP, err := s.Checkpoint(ctx, "r1")
	check("Checkpoint", cp, gotCP, err)
	gotAppr, err := s.Approval(ctx, "a1")
	check("Approval", appr, gotAppr, err)

	if err := s.Apply(ctx, core.Batch{Audit: []core.AuditEntry{{Time: now, Kind: core.AuditExpired, ConvKey: conv}}}); err != nil {
		t.Fatal(err)
	}
	es, err := s.Audit(ctx, core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Kind != core.AuditProposed || es[1].ID <= es[0].ID {
		t.Errorf("Audit after reopening = %+v, want the old entry, then the new one with a larger id", es)
	}
}

func TestErrorsWrapSentinels(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "opsgate.db"))
	_, err := s.Run(t.Context(), "nope")
	if !errors.Is(err, core.ErrNotFound) || !strings.HasPrefix(err.Error(), "sqlite: ") {
		t.Errorf("Run of an unknown id: err = %q, want a \"sqlite: \" error wrapping ErrNotFound", err)
	}
}

// A database written before 0003_conversation_activity gets each
// conversation's last activity from what it holds.
func TestMigrationBackfillsConversationActivity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opsgate.db")
	db := raw(t, path)
	for _, m := range []string{"0001_init", "0002_inbound_done"} {
		b, err := os.ReadFile(filepath.Join("migrations", m+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(b)); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	t0 := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC).UnixMicro()
	for _, stmt := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (1, '0001_init', 0), (2, '0002_inbound_done', 0)`,
		// quiet: created last, nothing since; chatty: a message later;
		// asked: an inbound message later still, its message without a time.
		`INSERT INTO conversations (key, created_at) VALUES ('chatty', $t0), ('asked', $t0 + 1), ('quiet', $t0 + 2)`,
		`INSERT INTO messages (conv_key, role, content, tool_call_id, name, run_id, time) VALUES
			('chatty', 'user', 'hi', '', '', '', $t0 + 10), ('asked', 'user', 'hi', '', '', '', NULL)`,
		`INSERT INTO inbound (conv_key, message_id, user_id, user_name, text, time, stored_at) VALUES
			('asked', 'm1', 'u', 'u', 'hi', NULL, $t0 + 20)`,
	} {
		if _, err := db.Exec(stmt, sql.Named("t0", t0)); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	s := open(t, path)
	cs, err := s.Conversations(t.Context(), core.ConversationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Key     string
		Updated int64
	}
	var got []row
	for _, c := range cs {
		got = append(got, row{c.Key, c.UpdatedAt.UnixMicro() - t0})
	}
	want := []row{{"asked", 20}, {"chatty", 10}, {"quiet", 2}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("conversations after migrating (-want +got, µs after t0):\n%s", d)
	}
}

func TestLeases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opsgate.db")
	a, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.RunLeases(t, a, b)
}
