package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/terminal"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// chatRun runs `opsgate chat` in-process with stdin and the extra args.
func chatRun(t *testing.T, cfg, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut strings.Builder
	code = Main(context.Background(), append([]string{"chat", "--config", cfg}, args...), strings.NewReader(stdin), &out, &errOut, testEnv())
	return out.String(), errOut.String(), code
}

// userMessages returns the user messages of a model request.
func userMessages(req llmfake.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}

// Issue 9 acceptance 7: Terminal: a 2 MiB line gets an error and the next
// line is answered; /new starts a fresh conversation (the next model
// request has no earlier user message); a second `opsgate chat` starts
// fresh, --resume continues.
func TestChatLongLineNewConversationAndResume(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	cfg := writeConfig(t, dir, llm.URL, "", "")
	llm.Push(
		llmfake.Reply{Text: "Hello to you."},
		llmfake.Reply{Text: "Second, fresh."},
		llmfake.Reply{Text: "Third, fresh again."},
		llmfake.Reply{Text: "Fourth, resumed."},
	)

	// --resume with nothing to resume says so and starts a new conversation.
	stdin := strings.Repeat("x", 2<<20) + "\nhello\n/new\nsecond\n"
	stdout, stderr, code := chatRun(t, cfg, stdin, "--resume")
	if code != exitError {
		t.Errorf("exit %d, want %d for the discarded line", code, exitError)
	}
	mustInOrder(t, stdout,
		"error: the line is longer than 1 MiB; it was discarded\n",
		"Hello to you.\n",
		"🆕 new conversation ",
		"Second, fresh.\n")
	mustContain(t, "stderr", stderr,
		"opsgate: no earlier terminal conversation to resume; starting a new one\n",
		"opsgate: terminal: line too long: 1 line(s) longer than 1 MiB were discarded\n")

	stdout, stderr, code = chatRun(t, cfg, "third\n")
	if code != exitOK || !strings.Contains(stdout, "Third, fresh again.\n") {
		t.Errorf("second chat: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = chatRun(t, cfg, "fourth\n", "--resume")
	if code != exitOK || !strings.Contains(stdout, "Fourth, resumed.\n") || stderr != "" {
		t.Errorf("chat --resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	var got [][]string
	for _, req := range llm.Requests() {
		got = append(got, userMessages(req))
	}
	want := [][]string{
		{"hello"},           // the 2 MiB line never reached the model
		{"second"},          // after /new
		{"third"},           // a second opsgate chat
		{"third", "fourth"}, // --resume: the most recent conversation
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user messages of each model request (-want +got):\n%s", diff)
	}
}

// --conversation NAME starts a named conversation, continues it later,
// and keeps it apart from the others; --resume then finds it, being the
// most recent.
func TestChatNamedConversation(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	cfg := writeConfig(t, dir, llm.URL, "", "")
	for _, s := range []string{"one", "two", "three", "four"} {
		llm.Push(llmfake.Reply{Text: "answer " + s})
	}
	llm.Push(llmfake.Reply{Text: "Incident 7"}) // incident-7's third exchange titles it
	for _, step := range []struct {
		stdin string
		args  []string
	}{
		{"one\n", []string{"--conversation", "incident-7"}},
		{"two\n", nil},
		{"three\n", []string{"--conversation", "incident-7"}},
		{"four\n", []string{"--resume"}},
	} {
		stdout, stderr, code := chatRun(t, cfg, step.stdin, step.args...)
		if code != exitOK {
			t.Fatalf("chat %v: exit %d\nstdout:\n%s\nstderr:\n%s", step.args, code, stdout, stderr)
		}
	}
	var got [][]string
	titles := 0
	for _, req := range llm.Requests() {
		if isTitleRequest(req) {
			titles++
			continue
		}
		got = append(got, userMessages(req))
	}
	if titles != 1 {
		t.Errorf("%d title requests, want 1 (after incident-7's third exchange)", titles)
	}
	want := [][]string{{"one"}, {"two"}, {"one", "three"}, {"one", "three", "four"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user messages of each model request (-want +got):\n%s", diff)
	}
}

// keysOf lists the store's conversation keys as the engine does
// (core.Engine.ConversationKeys).
func keysOf(store core.ConversationStore) terminal.Keys {
	return func(ctx context.Context, prefix string) ([]string, error) {
		cs, err := store.Conversations(ctx, core.ConversationFilter{KeyPrefix: prefix})
		keys := make([]string, len(cs))
		for i, c := range cs {
			keys[i] = c.Key
		}
		return keys, err
	}
}

// The interactive banner names the conversation in use and how to return.
func TestChatConversationBanner(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "opsgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c, err := terminal.ChooseConversation(ctx, keysOf(store), "alice", true, "")
	if err != nil {
		t.Fatal(err)
	}
	id := terminal.ConvID(c.Key)
	want := "no earlier terminal conversation to resume; starting a new one\nconversation " + id +
		" (new; `opsgate chat --conversation " + id + "` continues it)"
	if got := c.Banner(); got != want || !strings.HasPrefix(c.Key, "terminal:alice:") {
		t.Errorf("banner = %q (key %q), want %q", got, c.Key, want)
	}
	if err := store.Apply(ctx, core.Batch{ConvKey: c.Key, Messages: []core.Message{{Role: core.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if c, err = terminal.ChooseConversation(ctx, keysOf(store), "alice", true, ""); err != nil {
		t.Fatal(err)
	}
	if got := c.Banner(); got != "conversation "+id+" (resumed; `opsgate chat --conversation "+id+"` continues it)" {
		t.Errorf("banner after --resume = %q", got)
	}
	if c, err = terminal.ChooseConversation(ctx, keysOf(store), "alice", false, id); err != nil || c.How != "continued" {
		t.Errorf("--conversation %s = %+v, %v; want it continued", id, c, err)
	}
	if c, err = terminal.ChooseConversation(ctx, keysOf(store), "bob", true, ""); err != nil || c.How != "new" {
		t.Errorf("bob's --resume = %+v, %v; want a new conversation, not alice's", c, err)
	}
}
