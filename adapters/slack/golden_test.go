package slack_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core/coretest"
)

// Issue 22 acceptance 4: golden files of what Slack users see, as the Web
// API receives it: the chat.postMessage and chat.update parameters
// (mrkdwn text and Block Kit blocks with their buttons) of approval cards
// in every state, drafts and tool lines (testdata/golden; -update
// rewrites them).
func TestCardsDraftsAndToolLinesGolden(t *testing.T) {
	var fake *slacktest.Server
	setup := func(t *testing.T) rendertest.Env {
		fake = slacktest.New(t)
		a, err := slack.New(slack.Config{BotToken: slacktest.BotToken, SigningSecret: secret, APIURL: fake.APIURL(),
			MinEditInterval: 200 * time.Millisecond, FirstSendDebounce: 50 * time.Millisecond}, coretest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return rendertest.Env{
			Sender:  a.Sender(),
			NewConv: func() string { return slack.ConvKey(slacktest.TeamID, fmt.Sprintf("C%04d", 1), fake.NextTS()) },
			Flush:   a.Sender().Flush,
			Limits:  a.Sender().Limits(),
		}
	}
	rendertest.Golden(t, setup, func(string) []rendertest.Payload {
		var out []rendertest.Payload
		for _, c := range fake.Calls("") {
			if !c.OK() || c.Method != "chat.postMessage" && c.Method != "chat.update" {
				continue
			}
			// The channel and the timestamps only address the message;
			// Slack's are new at every run.
			out = append(out, rendertest.Payload{Message: c.TS, Method: c.Method, Body: rendertest.FormBody(c.Form, "channel", "ts", "thread_ts", "token")})
		}
		return out
	})
}
