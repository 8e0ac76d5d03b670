package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

func TestNewValidatesConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  slack.Config
		want string // part of the error; "" for none
	}{
		{"socket mode", slack.Config{BotToken: "xoxb-1", AppToken: "xapp-1"}, ""},
		{"http mode", slack.Config{BotToken: "xoxb-1", SigningSecret: "s"}, ""},
		{"no bot token", slack.Config{AppToken: "xapp-1"}, "bot_token is required"},
		{"tokens swapped", slack.Config{BotToken: "xapp-1", AppToken: "xoxb-1"}, "app-level token"},
		{"bot token as app token", slack.Config{BotToken: "xoxb-1", AppToken: "xoxb-2"}, "app_token must be"},
		{"no transport", slack.Config{BotToken: "xoxb-1"}, "app_token (Socket Mode) or signing_secret"},
		{"bad api url", slack.Config{BotToken: "xoxb-1", AppToken: "xapp-1", APIURL: "slack.com/api"}, "api_url"},
		{"approve everyone", slack.Config{BotToken: "xoxb-1", AppToken: "xapp-1", Approvers: []string{"*"}}, "approvers"},
		{"empty channel id", slack.Config{BotToken: "xoxb-1", AppToken: "xapp-1", Channels: []string{" "}}, "channels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := slack.New(c.cfg, coretest.Logger(t))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("New: error %v, want one about %q", err, c.want)
			}
			if a != nil {
				a.Close()
			}
		})
	}
}

// api_url without its trailing "/" still works (slack-go appends method
// names to it).
func TestAPIURLWithoutTrailingSlash(t *testing.T) {
	fake := slacktest.New(t)
	a, err := slack.New(slack.Config{BotToken: slacktest.BotToken, SigningSecret: secret,
		APIURL: strings.TrimSuffix(fake.APIURL(), "/")}, coretest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, nil) }()
	fake.Eventually(t, "auth.test", func() bool { return len(fake.Calls("auth.test")) == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if c := fake.Calls("auth.test")[0]; !c.OK() {
		t.Errorf("auth.test failed: %+v", c)
	}
	a.Close()
}

func TestRunFailsOnRefusedToken(t *testing.T) {
	fake := slacktest.New(t)
	a, err := slack.New(slack.Config{BotToken: "xoxb-revoked", AppToken: slacktest.AppToken, APIURL: fake.APIURL()}, coretest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Run(ctx, nil); err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Errorf("Run = %v, want the refused token reported", err)
	}
}

// The Socket Mode connection answers Slack's PINGs, reconnects when Slack
// asks it to, and keeps working on the new connection.
func TestSocketModeReconnectsOnDisconnect(t *testing.T) {
	s := newStack(t)
	s.fake.Eventually(t, "pongs", func() bool { return s.fake.Pongs() >= 2 })
	s.fake.Disconnect(t)
	s.fake.Eventually(t, "a second connection", func() bool { return s.fake.Opens() >= 2 })
	s.fake.WaitConnected(t)
	s.llm.Push(llmfake.Reply{Text: "Still here."})
	ts, ev := s.fake.Mention(chOps, alice, "are you there?", "")
	s.fake.SendEvent(t, ev)
	s.waitFinal(chOps, ts, "Still here.")
}
