package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 12, acceptance 7: the model keeps a note and proposes it for the
// whole workspace; the proposal is a card with Promote / Reject; a click
// by someone who is not an admin is refused privately and audited; the
// admin's Promote makes the note workspace memory, admin_approved, with a
// version entry.
func TestPromotionNeedsAnAdmin(t *testing.T) {
	dir := t.TempDir()
	sl := slacktest.New(t)
	sl.AddUser("U0ALICE", "alice")
	sl.AddUser("U0BOB", "bob")
	sl.AddUser("U0MAL", "mallory")
	model := llmfake.New(t)
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(`
people:
  alice:   {slack: U0ALICE}
  bob:     {slack: U0BOB}
  mallory: {slack: U0MAL}
roles:
  admin: [bob]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, model.URL, "", fmt.Sprintf(
		"policy:\n  file: %s\nslack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n",
		pol, slacktest.BotToken, slacktest.AppToken, sl.APIURL()))
	model.Push(
		toolCall("c0", "load_toolset", `{"toolset":"memory"}`),
		toolCall("c1", "memory_remember", `{"title":"Payments pool size","content":"payments-api holds 20 database connections per pod; raise PAYMENTS_POOL_SIZE before scaling past 30 pods.","scope":"channel","path":"notes/payments-pool.md"}`),
		toolCall("c2", "memory_propose_promotion", `{"path":"notes/payments-pool.md","reason":"it held in INC-2041 and applies to every payments incident"}`),
		llmfake.Reply{Text: "I kept the note and proposed it for everyone."},
	)
	s := serveConfig(t, cfg)
	sl.WaitConnected(t)
	root, ev := sl.Mention("C0OPS", "U0ALICE", "remember the payments pool size for everyone", "")
	sl.SendEvent(t, ev)

	var card slacktest.Message
	sl.Eventually(t, "the promotion card", func() bool {
		for _, m := range sl.Messages("C0OPS", root, nil) {
			if _, ok := m.Button("promote"); ok {
				card = m
				return true
			}
		}
		return false
	})
	mustContain(t, "the card", card.Plain(), "Memory promotion proposed", "notes/payments-pool.md", "Payments pool size", "INC-2041")
	if _, ok := card.Button("reject"); !ok {
		t.Errorf("the card has no Reject button: %+v", card.Buttons())
	}
	promote, _ := card.Button("promote")

	sl.SendClick(t, sl.Click("U0MAL", "mallory", card, promote))
	sl.Eventually(t, "mallory's refusal", func() bool { return len(sl.Ephemerals("U0MAL")) > 0 })
	mustContain(t, "mallory's refusal", sl.Ephemerals("U0MAL")[0].Text, "not allowed")

	sl.SendClick(t, sl.Click("U0BOB", "bob", card, promote))
	sl.Eventually(t, "the card to show the promotion", func() bool {
		m, _ := sl.Message(card.Channel, card.TS)
		return strings.Contains(m.Plain(), "Promoted by @bob") && len(m.Buttons()) == 0
	})
	s.stop(t)

	code, out, errOut := runMain(t, testEnv(), "memory", "show", "notes/payments-pool.md", "--config", cfg)
	if code != 0 {
		t.Fatalf("memory show: %d\n%s\n%s", code, out, errOut)
	}
	mustInOrder(t, out, "scope:    workspace", "trust:    admin_approved", "status:   active", "history:", "  v1 ", "agent", "  v2 ", "promoted by")

	code, out, errOut = runMain(t, testEnv(), "audit", "--config", cfg)
	if code != 0 {
		t.Fatalf("audit: %d\n%s", code, errOut)
	}
	mustContain(t, "the audit log", out, "refused   slack:U0MAL    memory/memory_propose_promotion", "executed  slack:U0BOB    memory/memory_propose_promotion", "promoted notes/payments-pool.md to workspace memory")
	if !strings.Contains(out, "approved") {
		t.Errorf("the audit log lacks the approval:\n%s", out)
	}
}
