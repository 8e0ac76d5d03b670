package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

// Issue 10, acceptance 4: a request raised in Slack whose rule notifies a
// Telegram chat is approved from the Telegram card; the Slack card and the
// Telegram card both end showing the outcome; the tool ran once.
func TestNotifyCardApprovesFromAnotherPlatform(t *testing.T) {
	dir := t.TempDir()
	sl := slacktest.New(t)
	sl.AddUser("U0ALICE", "alice")
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	k8s := mcpfake.New()
	const bobChat = 87654321
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(fmt.Sprintf(`
people:
  alice: {slack: U0ALICE}
  bob:   {telegram: "%d"}
rules:
  - name: scaling-needs-bob
    match: {server: k8s, tool: scale_deployment}
    action: ask
    approvers: [bob]
    notify: ["telegram:%d"]
`, bobChat, bobChat)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, model.URL, k8s.ServeHTTP(t), fmt.Sprintf(
		"policy:\n  file: %s\nslack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n",
		pol, slacktest.BotToken, slacktest.AppToken, sl.APIURL())+telegramConfig(tg))
	model.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c0", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "scale_deployment", Arguments: `{"name":"web","replicas":3}`}}},
		llmfake.Reply{Text: "Web runs 3 replicas now."},
	)
	s := serveConfig(t, cfg)
	sl.WaitConnected(t)
	root, ev := sl.Mention("C0OPS", "U0ALICE", "scale web to 3", "")
	sl.SendEvent(t, ev)

	var slackCard slacktest.Message
	sl.Eventually(t, "the Slack card", func() bool {
		for _, m := range sl.Messages("C0OPS", root, nil) {
			if _, ok := m.Button("approve"); ok {
				slackCard = m
				return true
			}
		}
		return false
	})
	var tgCard telegramtest.Message
	waitFor(t, 30*time.Second, "the Telegram card", func() bool {
		for _, m := range tg.Messages(bobChat) {
			if strings.Contains(m.Visible, "Approval needed") && len(m.Buttons) == 2 {
				tgCard = m
				return true
			}
		}
		return false
	})
	if !strings.Contains(tgCard.Visible, "scale_deployment") {
		t.Errorf("the Telegram card does not show the call:\n%s", tgCard.Visible)
	}

	bob := telegramtest.User(bobChat, "bob")
	tg.Click(bobChat, tgCard.ID, bob, tgCard.Buttons[0].Data)
	waitFor(t, 30*time.Second, "the tool to run", func() bool { return len(k8s.Calls()) > 0 })
	sl.Eventually(t, "the Slack card to show the outcome", func() bool {
		m, _ := sl.Message(slackCard.Channel, slackCard.TS)
		return strings.Contains(m.Plain(), "Approved by @bob") && len(m.Buttons()) == 0
	})
	waitFor(t, 30*time.Second, "the Telegram card to show the outcome", func() bool {
		for _, m := range tg.Messages(bobChat) {
			if m.ID == tgCard.ID {
				return strings.Contains(m.Visible, "Approved by @bob") && len(m.Buttons) == 0
			}
		}
		return false
	})
	s.stop(t)
	if calls := k8s.Calls(); len(calls) != 1 || calls[0].Tool != "scale_deployment" {
		t.Errorf("the MCP server ran %+v, want scale_deployment once", calls)
	}
}
