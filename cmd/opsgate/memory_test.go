package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/internal/golden"
)

const runbooks30 = "../../memory/testdata/corpus/runbooks30"

// acceptanceQuestions reads memory/testdata/acceptance.yaml.
func acceptanceQuestions(t *testing.T) []struct{ Q, Expected, Kind string } {
	t.Helper()
	b, err := os.ReadFile("../../memory/testdata/acceptance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct{ Q, Expected, Kind string }
	if err := yaml.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}

// Issue 12, acceptance 1 end to end: 30 imported runbooks; a question
// naming a service, a namespace and a symptom gets its runbook first in
// one extra system message of each model call of that turn (once per
// call), within the budget; the next turn does not carry it, and the
// transcript never holds it.
func TestMemoryInjectedIntoTheTurn(t *testing.T) {
	q := acceptanceQuestions(t)[0]
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			llm := llmfake.New(t)
			cfg := writeConfig(t, dir, llm.URL, mcpfake.New().ServeHTTP(t), "")
			if kind == "postgres" {
				usePostgres(t, cfg)
			}
			code, out, errOut := runMain(t, testEnv(), "memory", "import", runbooks30, "--config", cfg)
			if code != 0 || !strings.HasPrefix(out, "30 created, 0 updated, 0 unchanged, 0 skipped, 0 refused") {
				t.Fatalf("import: code %d\n%s\n%s", code, out, errOut)
			}
			llm.Push(toolCall("c1", "get_pods", `{"namespace":"payments"}`), llmfake.Reply{Text: "Roll back the deploy."},
				llmfake.Reply{Text: "Good night."})
			stdout, stderr, code := chatRun(t, cfg, q.Q+"\nok thank you, good night\n")
			if code != 0 {
				t.Fatalf("chat: code %d\n%s\n%s", code, stdout, stderr)
			}
			mustContain(t, "chat output", stdout, "📚 runbook: "+"payments-api-502-after-deploy.md")
			reqs := llm.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model calls, want 3", len(reqs))
			}
			for i, r := range reqs[:2] {
				var mem []string
				for _, m := range r.Messages {
					if m.Role == "system" && strings.Contains(m.Content, "<memory_context>") {
						mem = append(mem, m.Content)
					}
				}
				if len(mem) != 1 {
					t.Fatalf("call %d has %d memory messages, want 1", i+1, len(mem))
				}
				first := strings.Index(mem[0], "\n[1] ")
				if first < 0 || !strings.HasPrefix(mem[0][first+5:], q.Expected+" (runbook, admin_approved)") {
					t.Errorf("call %d: the first document is not %s:\n%.400s", i+1, q.Expected, mem[0])
				}
				if r.Messages[0].Role != "system" || strings.Contains(r.Messages[0].Content, "<memory_context>") {
					t.Errorf("call %d: the base system prompt was replaced", i+1)
				}
			}
			for i, r := range reqs {
				for _, m := range r.Messages {
					if m.Role != "system" && strings.Contains(m.Content, "<memory_context>") {
						t.Errorf("call %d: memory inside a %s message: the transcript holds it", i+1, m.Role)
					}
				}
			}
			for _, m := range reqs[2].Messages {
				if strings.Contains(m.Content, "["+"1] "+q.Expected) {
					t.Errorf("the next turn still carries the first turn's memory")
				}
			}
		})
	}
}

// The memory commands work in the terminal: /remember, /memory finds it,
// /forget archives it, and /memory no longer finds it; none reaches the
// model.
func TestMemoryCommandsInTheTerminal(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	cfg := writeConfig(t, dir, llm.URL, "", "")
	stdout, stderr, code := chatRun(t, cfg, "/remember payments-api keeps 20 database connections per pod\n/memory payments database connections\n/forget notes/payments-api-keeps-20-database-connections-per-pod.md\n/memory payments database connections\n")
	if code != 0 {
		t.Fatalf("chat: code %d\n%s\n%s", code, stdout, stderr)
	}
	mustInOrder(t, stdout, "Remembered as notes/payments-api-keeps-20-database-connections-per-pod.md", "1. `notes/payments-api-keeps-20-database-connections-per-pod.md`", "Forgot notes/payments-api-keeps-20-database-connections-per-pod.md", "Nothing in memory matches")
	if n := len(llm.Requests()); n != 0 {
		t.Errorf("the model was asked %d times; commands never reach it", n)
	}
}

// Issue 12, acceptance 10: `opsgate memory search --explain` shows each
// score component (golden output, SQLite).
func TestMemorySearchExplainGolden(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "")
	if code, out, errOut := runMain(t, testEnv(), "memory", "import", runbooks30, "--config", cfg); code != 0 {
		t.Fatalf("import: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runMain(t, testEnv(), "memory", "search", "--explain", "payments-api", "502s", "after", "the", "deploy", "in", "payments", "--limit", "3", "--config", cfg)
	if code != 0 {
		t.Fatalf("search: %d\n%s\n%s", code, out, errOut)
	}
	golden.Check(t, filepath.Join("testdata", "memory-search-explain.golden"), []byte(out))
	for _, part := range []string{"text", "entity", "trust", "type", "recency"} {
		mustContain(t, "explain", out, "   "+part+" ")
	}
}

// The CLI's other subcommands over one store: list, show with history,
// promote, reject, export, and a usage error.
func TestMemoryCLI(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", "")
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(filepath.Join(src, "payments"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(rel, body string) {
		if err := os.WriteFile(filepath.Join(src, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("payments/pool.md", "---\ntitle: Payments pool\nscope: channel:slack:T1:C1\ntrust: agent_draft\n---\nThe payments pool holds 20 connections.\n")
	write("leak.md", "AWS key AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
	code, out, errOut := runMain(t, testEnv(), "memory", "import", src, "--config", cfg)
	if code != 1 || !strings.Contains(out, "1 created") || !strings.Contains(out, "refused   leak.md: secret") {
		t.Fatalf("import with an unsafe file: code %d, want 1\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runMain(t, testEnv(), "memory", "list", "--config", cfg)
	if code != 0 || !strings.Contains(out, "payments/pool.md") || !strings.Contains(out, "agent_draft") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	code, out, _ = runMain(t, testEnv(), "memory", "promote", id, "--config", cfg)
	if code != 0 || !strings.Contains(out, "payments/pool.md is now workspace admin_approved active (version 2)") {
		t.Fatalf("promote: %d\n%s", code, out)
	}
	code, out, _ = runMain(t, testEnv(), "memory", "show", "payments/pool.md", "--config", cfg)
	if code != 0 {
		t.Fatalf("show: %d\n%s", code, out)
	}
	mustInOrder(t, out, "scope:    workspace", "trust:    admin_approved", "The payments pool holds 20 connections.", "history:", "  v1 ", "  v2 ", "promoted by")
	code, out, _ = runMain(t, testEnv(), "memory", "export", "--config", cfg)
	if code != 0 || !strings.Contains(out, `"path":"payments/pool.md"`) {
		t.Fatalf("export: %d\n%s", code, out)
	}
	code, out, _ = runMain(t, testEnv(), "memory", "reject", id, "--config", cfg)
	if code != 0 || !strings.Contains(out, "archived (version 3)") {
		t.Fatalf("reject: %d\n%s", code, out)
	}
	code, _, errOut = runMain(t, testEnv(), "memory", "show", "--config", cfg)
	if code != exitUsage || !strings.Contains(errOut, "want 1 argument") {
		t.Errorf("show without a path: code %d\n%s", code, errOut)
	}
	code, _, errOut = runMain(t, testEnv(), "memory", "frobnicate", "--config", cfg)
	if code != exitUsage || !strings.Contains(errOut, `unknown subcommand "frobnicate"`) {
		t.Errorf("unknown subcommand: code %d\n%s", code, errOut)
	}
}
