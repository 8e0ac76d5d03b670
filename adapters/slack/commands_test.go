package slack_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Slash command -> visible root message, run in its thread, streamed edits
// at most once per second, final text exact.
func TestSlashCommandStreamsIntoThread(t *testing.T) {
	s := newStack(t)
	answer := words(45, "pod")
	s.llm.Push(llmfake.Reply{Text: answer, TokenDelay: 60 * time.Millisecond})

	env := s.fake.SendCommand(t, s.fake.SlashCommand(chOps, alice, "alice", "what is failing in prod?"))
	if ack := s.fake.WaitAck(t, env); len(ack.Payload) != 0 && string(ack.Payload) != "null" {
		t.Errorf("a request is acknowledged empty (its answer is the thread), got %s", ack.Payload)
	}

	var root slacktest.Message
	s.fake.Eventually(t, "the root message", func() bool {
		ms := s.fake.BotReplies(chOps, "")
		if len(ms) == 1 {
			root = ms[0]
		}
		return len(ms) == 1
	})
	if got, want := root.Plain(), "@"+alice+" asked: what is failing in prod?"; got != want {
		t.Errorf("root message = %q, want %q", got, want)
	}
	replies := s.waitFinal(chOps, root.TS, answer)
	if len(replies) != 1 {
		t.Fatalf("thread has %d bot messages, want the one streamed draft: %+v", len(replies), replies)
	}
	draft := replies[0]
	if draft.Edits < 2 {
		t.Errorf("the draft was edited %d times while %d words streamed over ~3 s; want it streamed", draft.Edits, 45)
	}
	// At most one edit per second per conversation, from the fake's clock.
	var last time.Time
	for _, c := range s.fake.Calls("chat.update") {
		if c.ThreadTS != root.TS {
			continue
		}
		if !last.IsZero() && c.Time.Sub(last) < time.Second-10*time.Millisecond {
			t.Errorf("two chat.update calls %v apart, want at least 1s", c.Time.Sub(last))
		}
		last = c.Time
	}
	if n := len(s.llm.Requests()); n != 1 {
		t.Errorf("model got %d requests, want 1", n)
	}
	req := s.llm.Requests()[0]
	if got := req.Messages[len(req.Messages)-1].Content; got != "what is failing in prod?" {
		t.Errorf("model saw %q, want the request", got)
	}
}

// An envelope is acknowledged before any of its work: with Slack's
// chat.postMessage held, the ack still arrives, and the root message
// follows once Slack answers.
func TestSlashCommandAcknowledgedBeforeWork(t *testing.T) {
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "On it."})
	release := s.fake.Hold("chat.postMessage")
	env := s.fake.SendCommand(t, s.fake.SlashCommand(chOps, alice, "alice", "restart web"))
	s.fake.WaitAck(t, env)
	s.fake.Eventually(t, "the root post to reach Slack", func() bool { return len(s.fake.Calls("chat.postMessage:held")) == 1 })
	if n := len(s.fake.Calls("chat.postMessage")); n != 0 {
		t.Fatalf("%d posts completed while Slack held them", n)
	}
	release()
	root := s.waitReplies(chOps, "", "the root message", func(ms []slacktest.Message) bool { return len(ms) == 1 })[0]
	s.waitFinal(chOps, root.TS, "On it.")
}

func TestSlashHelpStatusAndStop(t *testing.T) {
	s := newStack(t)

	env := s.fake.SendCommand(t, s.fake.SlashCommand(chOps, alice, "alice", "help"))
	var help struct {
		ResponseType string `json:"response_type"`
		Text         string `json:"text"`
	}
	if err := json.Unmarshal(s.fake.WaitAck(t, env).Payload, &help); err != nil || help.ResponseType != "ephemeral" ||
		!strings.Contains(help.Text, "/opsgate status") {
		t.Errorf("help ack = %+v (%v), want a private help text", help, err)
	}

	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Looking at the cluster now", Hold: hold})
	s.fake.SendCommand(t, s.fake.SlashCommand(chOps, alice, "alice", "check everything"))
	root := s.waitReplies(chOps, "", "the root message", func(ms []slacktest.Message) bool { return len(ms) == 1 })[0]
	s.waitReplies(chOps, root.TS, "the draft", func(ms []slacktest.Message) bool { return len(ms) == 1 })

	s.fake.SendCommand(t, s.fake.SlashCommand(chOps, alice, "alice", "status"))
	s.fake.Eventually(t, "the status answer", func() bool { return len(s.fake.Responses()) == 1 })
	if st := s.fake.Responses()[0]; st.Body["response_type"] != "ephemeral" || !strings.Contains(st.Text(), "running for") ||
		!strings.Contains(st.Text(), "/archives/"+chOps+"/p") {
		t.Errorf("status = %+v, want a private line linking the running thread", st.Body)
	}

	s.fake.SendCommand(t, s.fake.SlashCommand(chOps, bob, "bob", "stop"))
	s.fake.Eventually(t, "the stop answer", func() bool { return len(s.fake.Responses()) == 2 })
	if got := s.fake.Responses()[1].Text(); !strings.Contains(got, "Stopped 1") {
		t.Errorf("stop answered %q", got)
	}
	ms := s.waitReplies(chOps, root.TS, "the stopped draft", func(ms []slacktest.Message) bool {
		return len(ms) == 1 && strings.Contains(ms[0].Plain(), "Stopped") && len(ms[0].Buttons()) == 0
	})
	if !strings.Contains(ms[0].Plain(), "Looking") {
		t.Errorf("stopped draft lost its text: %q", ms[0].Plain())
	}

	s.fake.SendCommand(t, s.fake.SlashCommand(chOps, alice, "alice", "stop"))
	s.fake.Eventually(t, "the second stop answer", func() bool { return len(s.fake.Responses()) == 3 })
	if got := s.fake.Responses()[2].Text(); !strings.Contains(got, "Nothing is running") {
		t.Errorf("stop with nothing running answered %q", got)
	}
}
