package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/internal/browsertest"
)

// The console's tests run serve with the chat fakes, the MCP fake and
// llmfake, and drive the console in headless Chromium as bob, who uses
// only the API and may approve; alice asks in every chat.

const (
	consoleGuild   = "1200000000000000001"
	consoleChannel = "1300000000000000001"
	consoleTGChat  = -1010
	aliceSlack     = "U0ALICE"
	aliceTGID      = 1101
)

var aliceDiscord = discordtest.User{ID: "1400000000000000001", Name: "alice"}

// consolePolicy lets bob (API only) approve writes, and nobody else; he
// sees the chats' conversations through a visibility rule (docs/design.md §17).
var consolePolicy = fmt.Sprintf(`
people:
  alice: {slack: %s, telegram: "%d", discord: "%s"}
  bob:   {api: bob}
roles:
  sre: [bob]
defaults:
  approvers: [sre]
visibility:
  - roles: [sre]
    conversations: ["slack:*", "telegram:*", "discord:*", "api:*"]
`, aliceSlack, aliceTGID, aliceDiscord.ID)

// consoleServe is a serve with the fakes of the chats it was given.
type consoleServe struct {
	t     *testing.T
	cfg   string
	s     *served
	model *llmfake.Server
	k8s   *mcpfake.Fixture
	sl    *slacktest.Server
	tg    *telegramtest.Server
	dc    *discordtest.Server
	bob   string // bob's API token
}

// newConsoleServe writes the configuration for the chats named (slack,
// telegram, discord); push scripts the model before serve starts.
func newConsoleServe(t *testing.T, chats []string, push ...llmfake.Reply) *consoleServe {
	t.Helper()
	dir := t.TempDir()
	c := &consoleServe{t: t, model: llmfake.New(t), k8s: mcpfake.New()}
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(consolePolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf("policy:\n  file: %s\n", pol)
	for _, chat := range chats {
		switch chat {
		case "slack":
			c.sl = slacktest.New(t)
			c.sl.AddUser(aliceSlack, "alice")
			extra += fmt.Sprintf("slack:\n  bot_token: %s\n  app_token: %s\n  api_url: %s\n  channels: [\"*\"]\n",
				slacktest.BotToken, slacktest.AppToken, c.sl.APIURL())
		case "telegram":
			c.tg = telegramtest.New(t)
			extra += fmt.Sprintf("telegram:\n  token: %q\n  api_url: %s\n  allowed_users: [%d]\n", telegramtest.Token, c.tg.URL, aliceTGID)
		case "discord":
			c.dc = discordtest.New(t, discordtest.WithHeartbeat(500*time.Millisecond))
			c.dc.AddChannel(consoleGuild, consoleChannel, "incidents")
			extra += fmt.Sprintf("discord:\n  token: %s\n  application_id: %q\n  api_url: %s\n  guilds: [%q]\n  channels: [%q]\n  allowed_users: [%q]\n",
				c.dc.Token, c.dc.AppID, c.dc.URL, consoleGuild, consoleChannel, aliceDiscord.ID)
		}
	}
	c.cfg = writeConfig(t, dir, c.model.URL, c.k8s.ServeHTTP(t), extra)
	c.bob, _ = createToken(t, c.cfg, "bob")
	c.model.Push(push...)
	c.s = serveConfig(t, c.cfg)
	if c.sl != nil {
		c.sl.WaitConnected(t)
	}
	if c.dc != nil && !c.dc.Wait(20*time.Second, c.dc.Connected) {
		t.Fatalf("the Discord adapter did not connect; log:\n%s", c.s.log.String())
	}
	return c
}

// scaleReplies are the model's answers to a request to scale: load the
// write tools, then ask to scale (needing approval).
func scaleReplies(id, name string, replicas int) []llmfake.Reply {
	return []llmfake.Reply{
		toolCall(id+"-load", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		toolCall(id, "scale_deployment", fmt.Sprintf(`{"name":%q,"replicas":%d}`, name, replicas)),
	}
}

// pending returns the pending approvals by platform (their conversation
// key's prefix), as the API lists them.
func (c *consoleServe) pending() map[string]core.Approval {
	c.t.Helper()
	status, body := apiCall(c.t, c.s, c.bob, "GET", "/api/v1/approvals?status=pending", "")
	var got struct{ Approvals []core.Approval }
	if err := json.Unmarshal([]byte(body), &got); status != http.StatusOK || err != nil {
		c.t.Fatalf("GET approvals = %d %s (%v)", status, body, err)
	}
	out := map[string]core.Approval{}
	for _, a := range got.Approvals {
		platform, _, _ := strings.Cut(a.ConvKey, ":")
		out[platform] = a
	}
	return out
}

// slackCard waits for the approval card in the Slack thread of root.
func (c *consoleServe) slackCard(root string) slacktest.Message {
	c.t.Helper()
	var card slacktest.Message
	c.sl.Eventually(c.t, "the Slack approval card", func() bool {
		for _, m := range c.sl.Messages("C0OPS", root, nil) {
			if _, ok := m.Button("approve"); ok {
				card = m
				return true
			}
		}
		return false
	})
	return card
}

// console opens the console signed in as bob.
func (c *consoleServe) console() *browsertest.Browser {
	c.t.Helper()
	b := browsertest.New(c.t)
	b.Navigate(c.s.base + "/")
	b.WaitVisible("#token")
	b.Type("#token", c.bob)
	b.Click("#login-submit")
	b.WaitVisible("#conv-rows")
	return b
}

// saveScreenshot keeps a PNG of the window in the test's directory and,
// for the documentation's picture (docs) with $OPSGATE_SCREENSHOT set,
// there too: OPSGATE_SCREENSHOT=$PWD/docs/console.png go test
// ./cmd/opsgate -run TestConsoleApprovesSlackRun makes docs/console.png.
func saveScreenshot(t *testing.T, b *browsertest.Browser, name string, docs bool) {
	t.Helper()
	png := b.Screenshot()
	if err := os.WriteFile(filepath.Join(t.TempDir(), name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("OPSGATE_SCREENSHOT"); p != "" && docs {
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s (%d bytes)", p, len(png))
	}
}

// Issue 13 acceptance 6: approvals pending in Slack, Telegram and Discord
// are all on the console's approvals page with their platforms; one is
// decided in the browser, its chat card shows the outcome, and the audit
// search finds the decision.
func TestConsolePendingAcrossPlatforms(t *testing.T) {
	c := newConsoleServe(t, []string{"slack", "telegram", "discord"}, scaleReplies("s1", "web", 3)...)

	// One request per chat, one after another: the model's answers are
	// one queue.
	root, ev := c.sl.Mention("C0OPS", aliceSlack, "scale web to 3", "")
	c.sl.SendEvent(t, ev)
	c.slackCard(root)

	c.model.Push(scaleReplies("t1", "api", 2)...)
	c.tg.Push(c.tg.NewTextUpdate(telegramtest.GroupChat(consoleTGChat), telegramtest.User(aliceTGID, "alice"), "@"+telegramtest.BotUsername+" scale api to 2"))
	tgMessage(t, c.tg, consoleTGChat, "the Telegram approval card", c.s.log, func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "Approval needed") && len(m.Buttons) == 2
	})

	c.model.Push(scaleReplies("d1", "worker", 5)...)
	c.model.Push(llmfake.Reply{Text: "Worker runs 5 replicas now."})
	msg, err := c.dc.Say(consoleChannel, aliceDiscord, c.dc.Mention()+" scale worker to 5")
	if err != nil {
		t.Fatal(err)
	}
	var dcCard discordtest.Message
	if !c.dc.Wait(30*time.Second, func() bool {
		for _, m := range c.dc.Messages(msg.ID) { // the thread started from the message
			if len(m.Buttons) == 2 {
				dcCard = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no Discord approval card; log:\n%s", c.s.log.String())
	}
	pending := c.pending()
	if len(pending) != 3 {
		t.Fatalf("pending approvals by platform = %v, want slack, telegram and discord", pending)
	}

	b := c.console()
	b.Keys("ga")
	for platform, a := range pending {
		card := `article.approval[data-approval="` + a.ID + `"]`
		b.WaitText(card+" .conv .badge", platform)
		b.WaitText(card+` [data-role="requester"]`, "alice")
		b.WaitText(card+` [data-role="quorum"]`, "0 of 1 approval")
	}
	b.WaitText(`[data-role="approvals-status"]`, "3 pending")
	assertNoSecretIn(t, b.HTML(), c.bob, "the approvals page")
	saveScreenshot(t, b, "approvals.png", false)

	// bob approves Discord's in the browser.
	a := pending["discord"]
	card := `article.approval[data-approval="` + a.ID + `"]`
	b.Click(card + " button.approve")
	b.WaitText(card+` [data-role="outcome"]`, "Approved by bob")
	if !c.dc.Wait(30*time.Second, func() bool {
		m, _ := c.dc.Message(msg.ID, dcCard.ID)
		return len(m.Buttons) == 0 && strings.Contains(m.Content, "bob")
	}) {
		m, _ := c.dc.Message(msg.ID, dcCard.ID)
		t.Errorf("the Discord card after bob's decision = %q %v, want the outcome naming bob", m.Content, m.Buttons)
	}
	if got := c.pending(); len(got) != 2 || got["discord"].ID != "" {
		t.Errorf("pending after the decision = %v, want slack and telegram", got)
	}

	// The audit search finds the decision.
	b.Keys("gu")
	b.WaitVisible("#audit-q")
	b.Type("#audit-q", a.ID)
	b.Click("#audit-search")
	b.WaitText(`#audit-rows tr[data-kind="approved"]`, "api:bob")
	b.WaitText(`#audit-rows tr[data-kind="approved"]`, "discord")
	c.s.stop(t)
}

// assertNoSecretIn fails when page holds secret.
func assertNoSecretIn(t *testing.T, page, secret, where string) {
	t.Helper()
	if strings.Contains(page, secret) {
		t.Errorf("%s holds the secret %.12s…", where, secret)
	}
}
