package slack_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Mention in a channel -> threaded reply; a follow-up in that thread
// without a mention continues the same conversation (the model sees the
// earlier turns). The bot's own posts (echoed back as message events, as
// Slack does) and other bots' messages start nothing.
func TestMentionStartsThreadAndFollowUpContinues(t *testing.T) {
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "The web pods are OOMKilled."}, llmfake.Reply{Text: "Their limit is 256Mi."})

	ts, ev := s.fake.Mention(chOps, alice, "why is web crashing?", "")
	s.fake.SendEvent(t, ev)
	s.waitFinal(chOps, ts, "The web pods are OOMKilled.")

	s.fake.SendEvent(t, s.fake.OtherBotSays(chOps, "B0OTHER", "I am another bot, answer me", ts))
	// Someone chatting in a thread the bot is not part of is not addressed.
	other, ev := s.fake.Say(chOps, mallory, "lunch?", "")
	s.fake.SendEvent(t, ev)
	_, ev = s.fake.Say(chOps, bob, "sure", other)
	s.fake.SendEvent(t, ev)

	_, ev = s.fake.Say(chOps, alice, "what limit do they have?", ts)
	s.fake.SendEvent(t, ev)
	replies := s.waitFinal(chOps, ts, "Their limit is 256Mi.")
	if len(replies) != 2 {
		t.Errorf("thread has %d bot messages, want one per turn: %+v", len(replies), replies)
	}

	s.shutdown()
	reqs := s.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model got %d requests, want 2 (one per user turn; none for bots or chatter)", len(reqs))
	}
	var transcript []string
	for _, m := range reqs[1].Messages {
		if m.Role != "system" {
			transcript = append(transcript, m.Role+": "+m.Content)
		}
	}
	want := []string{"user: why is web crashing?", "assistant: The web pods are OOMKilled.", "user: what limit do they have?"}
	if strings.Join(transcript, "\n") != strings.Join(want, "\n") {
		t.Errorf("second turn transcript:\n%s\nwant:\n%s", strings.Join(transcript, "\n"), strings.Join(want, "\n"))
	}
	if n := len(s.fake.BotReplies(chOps, other)); n != 0 {
		t.Errorf("the bot replied %d times in a thread it is not part of", n)
	}
}

// A thread the bot joined before a restart is recognised from Slack's
// history (conversations.replies), so follow-ups still need no mention.
func TestFollowUpInThreadFromBeforeRestart(t *testing.T) {
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "Hello again."})
	root, _ := s.fake.Mention(chOps, alice, "earlier question", "")
	// The bot answered in the thread in an earlier life of the process.
	s.fake.SetEcho(false)
	postAsBot(t, s.fake, chOps, root, "An earlier answer.")
	s.fake.SetEcho(true)

	_, ev := s.fake.Say(chOps, alice, "and now?", root)
	s.fake.SendEvent(t, ev)
	s.waitFinal(chOps, root, "Hello again.")
	if n := len(s.fake.Calls("conversations.replies")); n != 1 {
		t.Errorf("conversations.replies called %d times, want 1", n)
	}
}

// A redelivered envelope (same event id, retry_attempt > 0) is processed once.
func TestSocketModeRedeliveredEventProcessedOnce(t *testing.T) {
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "Once."})
	ts, ev := s.fake.Mention(chOps, alice, "ping", "")
	_, body := s.fake.EventCallback(ev)
	first := s.fake.SendEnvelope(t, "events_api", json.RawMessage(body), 0)
	again := s.fake.SendEnvelope(t, "events_api", json.RawMessage(body), 1)
	// Refused without the engine: its redelivery shows the adapter's own dedupe.
	_, refused := s.fake.Mention(chOther, alice, "hello?", "")
	_, refusedBody := s.fake.EventCallback(refused)
	s.fake.SendEnvelope(t, "events_api", json.RawMessage(refusedBody), 0)
	s.fake.SendEnvelope(t, "events_api", json.RawMessage(refusedBody), 1)
	s.fake.WaitAck(t, first)
	s.fake.WaitAck(t, again)
	s.waitFinal(chOps, ts, "Once.")
	s.shutdown()
	if n := len(s.fake.Ephemerals(alice)); n != 1 {
		t.Errorf("%d refusals for one redelivered event, want 1", n)
	}
	if n := len(s.llm.Requests()); n != 1 {
		t.Errorf("model got %d requests for one redelivered event, want 1", n)
	}
	if n := len(s.fake.BotReplies(chOps, ts)); n != 1 {
		t.Errorf("%d replies, want 1", n)
	}
}

func TestDirectMessageStartsThread(t *testing.T) {
	s := newStack(t, func(c *slack.Config, _ *core.Config) { c.AllowedUsers = []string{alice} })
	s.llm.Push(llmfake.Reply{Text: "Hi Alice."})
	ts, ev := s.fake.Say(dmAlice, alice, "hello", "")
	s.fake.SendEvent(t, ev)
	s.waitFinal(dmAlice, ts, "Hi Alice.")

	// Someone not allowed gets a private refusal in their DM, and nothing runs.
	_, ev = s.fake.Say("D0MALLORY", mallory, "hello?", "")
	s.fake.SendEvent(t, ev)
	s.fake.Eventually(t, "the refusal", func() bool { return len(s.fake.Ephemerals(mallory)) == 1 })
	s.shutdown()
	if n := len(s.llm.Requests()); n != 1 {
		t.Errorf("model got %d requests, want 1", n)
	}
}

// Outside the allowlist: a short private refusal, nothing runs.
func TestOutsideAllowlistRefusedPrivately(t *testing.T) {
	s := newStack(t)
	ts, ev := s.fake.Mention(chOther, alice, "delete everything", "")
	s.fake.SendEvent(t, ev)
	env := s.fake.SendCommand(t, s.fake.SlashCommand(chOther, alice, "alice", "delete everything"))
	// Without allowed_users, direct messages are refused too.
	_, ev = s.fake.Say(dmAlice, alice, "psst", "")
	s.fake.SendEvent(t, ev)

	ack := s.fake.WaitAck(t, env)
	if !strings.Contains(string(ack.Payload), `"ephemeral"`) || !strings.Contains(string(ack.Payload), "not enabled in this channel") {
		t.Errorf("slash command ack = %s, want a private refusal", ack.Payload)
	}
	s.fake.Eventually(t, "two private refusals", func() bool { return len(s.fake.Ephemerals(alice)) == 2 })
	for _, e := range s.fake.Ephemerals(alice) {
		if e.Channel == chOther && e.ThreadTS != ts {
			t.Errorf("refusal in %s went to thread %q, want the mention's thread %s", e.Channel, e.ThreadTS, ts)
		}
	}
	s.shutdown()
	if n := len(s.llm.Requests()); n != 0 {
		t.Errorf("model got %d requests, want none", n)
	}
	if n := len(s.fake.Calls("chat.postMessage")); n != 0 {
		t.Errorf("%d messages posted, want none", n)
	}
}

// Saying "stop" in a thread stops its run within the engine's bound.
func TestStopInThread(t *testing.T) {
	s := newStack(t)
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Scanning every namespace", Hold: hold})
	ts, ev := s.fake.Mention(chOps, alice, "scan everything", "")
	s.fake.SendEvent(t, ev)
	s.waitReplies(chOps, ts, "the draft", func(ms []slacktest.Message) bool { return len(ms) == 1 })
	_, ev = s.fake.Say(chOps, alice, "stop", ts)
	s.fake.SendEvent(t, ev)
	s.waitReplies(chOps, ts, "the stopped draft", func(ms []slacktest.Message) bool {
		return len(ms) == 1 && strings.Contains(ms[0].Plain(), "Stopped") && len(ms[0].Buttons()) == 0
	})
}

// A "stop" that is not a reply (a new direct message) stops the runs of
// the conversation's channel: it has no thread of its own.
func TestStopAsNewDirectMessage(t *testing.T) {
	s := newStack(t, func(c *slack.Config, _ *core.Config) { c.AllowedUsers = []string{alice} })
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Draining nodes", Hold: hold})
	ts, ev := s.fake.Say(dmAlice, alice, "drain everything", "")
	s.fake.SendEvent(t, ev)
	s.waitReplies(dmAlice, ts, "the draft", func(ms []slacktest.Message) bool { return len(ms) == 1 })
	_, ev = s.fake.Say(dmAlice, alice, "STOP!", "")
	s.fake.SendEvent(t, ev)
	s.waitReplies(dmAlice, ts, "the stopped draft", func(ms []slacktest.Message) bool {
		return len(ms) == 1 && strings.Contains(ms[0].Plain(), "Stopped") && len(ms[0].Buttons()) == 0
	})
	s.fake.Eventually(t, "the stop notice", func() bool { return len(s.fake.Ephemerals(alice)) == 1 })
	if e := s.fake.Ephemerals(alice)[0]; !strings.Contains(e.Text, "Stopped 1") {
		t.Errorf("stop notice = %q", e.Text)
	}
}

// A thread that starts with a mention of the bot is the bot's even where
// the mention was not seen (another replica took it) and the bot has not
// answered yet: a reply there is handled, not ignored.
func TestReplyInAThreadStartedByAMentionSeenElsewhere(t *testing.T) {
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "Checking the rollout."})
	// The mention is in Slack, but its event went to another replica.
	ts, _ := s.fake.Mention(chOps, alice, "is the rollout stuck?", "")
	_, ev := s.fake.Say(chOps, alice, "it is payments, in prod", ts)
	s.fake.SendEvent(t, ev)
	s.waitFinal(chOps, ts, "Checking the rollout.")
}
