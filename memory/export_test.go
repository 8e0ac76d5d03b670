package memory_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/memory/docs"
)

// Export writes every document as one JSON line, as the store has it.
func TestExport(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		m := mem(t, s)
		saveDoc(t, s, docs.Document{Path: "a.md", Content: "# A\n<b>&</b>\n", Tags: []string{"x"},
			Entities: map[string][]string{"service": {"payments-api"}}, Author: "cli:alice", Source: docs.Source{File: "a.md"}})
		saveDoc(t, s, docs.Document{Path: "b.md", Content: "B", Status: docs.Archived})
		saveDoc(t, s, docs.Document{Scope: docs.Scope{Kind: docs.Conversation, Key: "slack:T1:C1:1.2"}, Path: "notes/c.md", Content: "C",
			Trust: docs.AgentDraft, Status: docs.Draft, Author: "agent", Source: docs.Source{ConvKey: "slack:T1:C1:1.2", RunID: "r1", CallID: "c1"}})
		var buf bytes.Buffer
		if err := m.Export(t.Context(), &buf, docs.Filter{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "<b>&</b>") {
			t.Errorf("export escapes HTML: %s", buf.String())
		}
		var got []docs.Document
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			var d docs.Document
			if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			got = append(got, d)
		}
		if diff := cmp.Diff(all(t, s), got); diff != "" {
			t.Errorf("exported documents (-stored +exported):\n%s", diff)
		}
		buf.Reset()
		if err := m.Export(t.Context(), &buf, docs.Filter{Statuses: []docs.Status{docs.Draft}}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(buf.String(), "\n"); n != 1 || !strings.Contains(buf.String(), `"notes/c.md"`) {
			t.Errorf("export of drafts = %s, want the one draft", buf.String())
		}
	})
}

// What ExportDir writes, Import reads back as the same documents.
func TestExportDirRoundTrip(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		m, src := mem(t, s), t.TempDir()
		writeFiles(t, src, runbooks)
		if _, err := m.Import(t.Context(), src, "cli:alice"); err != nil {
			t.Fatal(err)
		}
		saveDoc(t, s, docs.Document{Scope: docs.Scope{Kind: docs.Conversation, Key: "slack:T1:C1:1.2"}, Path: "notes/agent.md",
			Title: "A title: with \"quotes\" and # signs", Content: "---\nlooks like front matter\n---\nbut is content", Type: docs.ConversationNote,
			Trust: docs.AgentDraft, Status: docs.Draft, Tags: []string{"yes", "no", "123"}, Entities: map[string][]string{"incident": {"inc-2142"}}})
		saveDoc(t, s, docs.Document{Path: "no-newline.md", Title: "No newline", Content: "ends without one"})
		want := all(t, s)

		out := t.TempDir()
		if err := m.ExportDir(t.Context(), out, docs.Filter{}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, "payments", "rollback.md"))
		if err != nil {
			t.Fatal(err)
		}
		wantFile := "---\ntitle: Roll back payments-api\ntype: incident_lesson\ntags: [payments, rollback]\n" +
			"entities:\n  namespace: payments\n  service: [payments-api, payments-worker]\n" +
			"scope: channel:slack:T1:C1\ntrust: user_authored\n---\n# Rollback\n\nRun helm rollback payments-api.\n"
		if diff := cmp.Diff(wantFile, string(b)); diff != "" {
			t.Errorf("payments/rollback.md (-want +got):\n%s", diff)
		}

		fresh := onSQLite(t)
		r, err := mem(t, fresh).Import(t.Context(), out, "cli:bob")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Skipped) > 0 || len(r.Created) != len(want) {
			t.Fatalf("re-import: %s", r)
		}
		got := all(t, fresh)
		if len(got) != len(want) {
			t.Fatalf("re-imported %d documents, want %d", len(got), len(want))
		}
		for i := range want {
			if !docs.Same(want[i], got[i]) {
				t.Errorf("re-imported %s differs:\n%s", want[i].Path, cmp.Diff(want[i], got[i]))
			}
		}
		// And into the store it came from: nothing changes.
		if r, err = m.Import(t.Context(), out, "cli:bob"); err != nil {
			t.Fatal(err)
		}
		if len(r.Unchanged) != len(want) {
			t.Errorf("import of the export into its own store: %s", r)
		}
	})
}

// Two documents of one path in different scopes cannot share a
// directory: export them one scope at a time.
func TestExportDirPathCollision(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		m := mem(t, s)
		saveDoc(t, s, docs.Document{Path: "x.md", Content: "workspace"})
		saveDoc(t, s, docs.Document{Scope: docs.Scope{Kind: docs.Channel, Key: "slack:T1:C1"}, Path: "x.md", Content: "channel"})
		err := m.ExportDir(t.Context(), t.TempDir(), docs.Filter{})
		if err == nil || !strings.Contains(err.Error(), "x.md") || !strings.Contains(err.Error(), "channel:slack:T1:C1") {
			t.Fatalf("ExportDir = %v, want an error naming the path and both scopes", err)
		}
		out := t.TempDir()
		if err := m.ExportDir(t.Context(), out, docs.Filter{Scopes: []docs.Scope{docs.WorkspaceScope}}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "x.md")); !strings.HasSuffix(string(b), "---\nworkspace") {
			t.Errorf("x.md = %q", b)
		}
	})
}
