package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 22 acceptance 5: one stop rule (policy.MayStop), as on Telegram
// and Discord. With slack.allowed_users naming alice only, mallory may not
// press Stop on alice's run and is told so privately; bob, an approver
// who may not talk to opsgate either, may.
func TestStopButtonFollowsMayStop(t *testing.T) {
	s := newStack(t, func(c *slack.Config, _ *core.Config) { c.AllowedUsers = []string{alice} })
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Scanning every namespace " + strings.Repeat("and more ", 20), Hold: hold})
	ts, ev := s.fake.Mention(chOps, alice, "scan everything", "")
	s.fake.SendEvent(t, ev)
	draft := s.waitReplies(chOps, ts, "the draft with a Stop button", func(ms []slacktest.Message) bool {
		return len(ms) == 1 && len(ms[0].Buttons()) == 1
	})[0]
	stop := draft.Buttons()[0]

	s.fake.SendClick(t, s.fake.Click(mallory, "mallory", draft, stop))
	s.fake.Eventually(t, "mallory's refusal", func() bool { return len(s.fake.Ephemerals(mallory)) == 1 })
	if e := s.fake.Ephemerals(mallory)[0]; !strings.Contains(e.Text, "not allowed to stop") {
		t.Errorf("mallory's Stop click answered %q", e.Text)
	}
	st, err := s.eng.Status(context.Background(), slack.ConvKey(slacktest.TeamID, chOps, ts))
	if err != nil || st.ActiveRun == nil {
		t.Fatalf("status after mallory's click = %+v, %v; want the run still active", st, err)
	}

	s.fake.SendClick(t, s.fake.Click(bob, "bob", draft, stop))
	s.waitReplies(chOps, ts, "the stopped draft", func(ms []slacktest.Message) bool {
		return len(ms) == 1 && strings.Contains(ms[0].Plain(), "Stopped") && len(ms[0].Buttons()) == 0
	})
}
