package discord_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 22 acceptance 5: one stop rule (policy.MayStop), as on Telegram
// and Slack. In alice's direct messages, mallory, who may not talk to the
// bot there, may not press Stop and is told so privately; bob, an
// approver (discord.approvers) who may not talk there either, may.
func TestStopButtonFollowsMayStop(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Looking at the nodes " + words("node", 20), Hold: hold})
	s.say(dmAlice, alice, "look at the nodes")
	ms := s.waitMessages(dmAlice, "the draft with a Stop button", func(ms []discordtest.Message) bool {
		return len(botMessages(ms, s.fake.Bot.ID)) == 1 && len(botMessages(ms, s.fake.Bot.ID)[0].Buttons) == 1
	})
	draft := botMessages(ms, s.fake.Bot.ID)[0]

	click(t, s, dmAlice, mallory, draft.ID, draft.Buttons[0].CustomID)
	waitEphemeral(t, s, mallory, "not allowed to stop")
	st, err := s.eng.Status(context.Background(), discord.ConvKey("", dmAlice))
	if err != nil || st.ActiveRun == nil {
		t.Fatalf("status after mallory's click = %+v, %v; want the run still active", st, err)
	}

	click(t, s, dmAlice, bob, draft.ID, draft.Buttons[0].CustomID)
	s.waitMessages(dmAlice, "the stopped draft", func(ms []discordtest.Message) bool {
		for _, m := range botMessages(ms, s.fake.Bot.ID) {
			if m.ID == draft.ID && len(m.Buttons) == 0 && strings.Contains(strings.ToLower(m.Content), "stopped") {
				return true
			}
		}
		return false
	})
}
