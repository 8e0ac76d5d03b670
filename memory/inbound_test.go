package memory_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/memory/sqlite"
	"github.com/opsgate/opsgate/policy/redact"
)

// typedSecret is the password a person types in chat.
const typedSecret = "Zq8mW2vT5xL9pRk4"

// Issue 21, acceptance 9: "/remember db password=…" stores nothing with
// the secret in it, in any table: the inbound message is redacted before
// it is stored, and /remember refuses what held a secret. Checked on the
// SQLite file (and its WAL) and on a pg_dump of the PostgreSQL database,
// for every 8-character piece of the secret.
func TestRememberedSecretLeavesNoTrace(t *testing.T) {
	pieces := func() []string {
		var out []string
		for i := 0; i+8 <= len(typedSecret); i++ {
			out = append(out, typedSecret[i:i+8])
		}
		return out
	}()
	check := func(t *testing.T, store core.Store, dump func() []byte) {
		stack := enginetest.New(t)
		red, err := redact.New(redact.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := memory.New(store.(docs.Store), memory.Options{Logger: coretest.Logger(t), Secrets: red.String})
		cfg := enginetest.Config()
		cfg.RedactInput = red.String
		rec := coretest.NewRecorder()
		d := stack.Deps(t, rec)
		d.Store, d.Commands, d.Retriever = store, m, m
		eng := enginetest.Engine(t, cfg, d)
		t.Cleanup(func() { eng.Shutdown(t.Context()) })
		in := core.Inbound{ConvKey: "slack:T1:C1", MessageID: "m1", User: core.Actor{ID: "slack:U0ALICE"},
			Text: "/remember db password=" + typedSecret}
		if err := eng.Handle(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		reply := rec.WaitCompleted(t, 1)
		if !strings.Contains(reply.Text, "Nothing was stored") || strings.Contains(reply.Text, typedSecret[:8]) {
			t.Errorf("reply %q; want it to refuse, without the secret", reply.Text)
		}
		eng.Shutdown(t.Context())
		data := dump()
		for _, p := range pieces {
			if i := bytes.Index(data, []byte(p)); i >= 0 {
				lo, hi := max(0, i-60), min(len(data), i+60)
				t.Errorf("the store holds %q of the secret: …%q…", p, data[lo:hi])
			}
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		s, err := sqlite.Open(t.Context(), filepath.Join(dir, "opsgate.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		check(t, s, func() []byte {
			var all []byte
			files, _ := filepath.Glob(filepath.Join(dir, "opsgate.db*")) // the database, its WAL and shm
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, b...)
			}
			if len(all) == 0 {
				t.Fatal("no SQLite file to scan")
			}
			return all
		})
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.DB(t)
		s, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		check(t, s, func() []byte {
			out, err := exec.Command(pgDump(t), "--data-only", "--dbname="+url).Output()
			if err != nil {
				t.Fatalf("pg_dump: %v", err)
			}
			if !bytes.Contains(out, []byte("COPY")) {
				t.Fatalf("pg_dump printed no data:\n%s", out)
			}
			return out
		})
	})
}

// pgDump finds pg_dump beside the server pgtest runs.
func pgDump(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(pgtest.EnvBin); bin != "" {
		return filepath.Join(bin, "pg_dump")
	}
	if ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_dump"); len(ms) > 0 {
		return ms[len(ms)-1]
	}
	p, err := exec.LookPath("pg_dump")
	if err != nil {
		t.Skip("no pg_dump")
	}
	return p
}
