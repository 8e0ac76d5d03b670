package slack_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// A 30,000-character reply arrives whole, split across blocks and
// messages, with no code fence split.
func TestLongReplySplitsAcrossBlocksAndMessages(t *testing.T) {
	s := newStack(t)
	answer, blocks := rendertest.LongAnswer(30000, 25)
	s.llm.Push(llmfake.Reply{Text: answer})
	ts, ev := s.fake.Mention(chOps, alice, "explain the whole rollout", "")
	s.fake.SendEvent(t, ev)
	msgs := s.waitReplies(chOps, ts, "the whole reply", func(ms []slacktest.Message) bool {
		return len(ms) > 0 && strings.Contains(ms[len(ms)-1].Plain(), "p-end") && len(ms[len(ms)-1].Buttons()) == 0
	})
	if len(msgs) < 4 {
		t.Errorf("%d messages for %d characters, want it continued over several (at most %d each)", len(msgs), len(answer), slack.MaxText)
	}

	// Every numbered line exactly once, in order; every code block in one
	// section of one message.
	var sections []string
	for i, m := range msgs {
		if len(m.Blocks) > 50 {
			t.Errorf("message %d has %d blocks, over Slack's 50", i, len(m.Blocks))
		}
		for j, sec := range m.Sections() {
			if n := utf8.RuneCountInString(sec.Text); n > 3000 {
				t.Errorf("message %d section %d has %d characters, over 3,000", i, j, n)
			}
			if sec.Type != "mrkdwn" {
				t.Errorf("message %d section %d is %s, want mrkdwn", i, j, sec.Type)
			}
			sections = append(sections, slacktest.Plain(sec.Text))
		}
	}
	if len(sections) <= len(msgs) {
		t.Errorf("%d sections in %d messages: want messages of several section blocks", len(sections), len(msgs))
	}
	rendertest.CheckWhole(t, answer, blocks, sections)
	// Escaping kept the text literal: the "<1% &" of the Markdown is
	// "&lt;1% &amp;" in mrkdwn, bold is bold, and the link is a link.
	sec := msgs[0].Sections()[0].Text
	if !strings.Contains(sec, "&lt;1% &amp; latency") || !strings.Contains(sec, "*rollout*") ||
		!strings.Contains(sec, "<https://runbooks.example.com/step/0|the runbook>") {
		t.Errorf("first section is not the expected mrkdwn:\n%.400s", sec)
	}
}

// 429 on chat.update: the final text still arrives, with no duplicate
// message.
func TestRateLimitedUpdateStillDeliversFinalText(t *testing.T) {
	s := newStack(t)
	answer := words(40, "node")
	s.llm.Push(llmfake.Reply{Text: answer, TokenDelay: 50 * time.Millisecond})
	s.fake.RateLimit("chat.update", 2, time.Second)
	ts, ev := s.fake.Mention(chOps, alice, "list the nodes", "")
	s.fake.SendEvent(t, ev)
	replies := s.waitFinal(chOps, ts, answer)
	if len(replies) != 1 || strings.TrimSpace(replies[0].Plain()) != answer {
		t.Fatalf("thread shows %d messages %+v, want exactly the answer once", len(replies), replies)
	}
	limited := 0
	for _, c := range s.fake.Calls("chat.update") {
		if c.Status == 429 {
			limited++
		}
	}
	if limited != 2 {
		t.Errorf("%d updates were rate-limited, want the 2 scripted", limited)
	}
	if n := len(s.fake.Calls("chat.postMessage")); n != 1 {
		t.Errorf("%d posts, want 1 (a rate-limited edit is never re-sent as a new message)", n)
	}
	if st := s.a.Sender().Stats(); st.RateLimited < 2 {
		t.Errorf("sender stats %+v: the 429s were not seen as rate limits", st)
	}
}

// The sender conformance suite, against the Slack fake.
func TestSenderConformance(t *testing.T) {
	rendertest.Run(t, func(t *testing.T) rendertest.Env {
		fake := slacktest.New(t)
		// Shorter than Slack's 1 s so that the suite is quick; the
		// acceptance tests run the real interval.
		a, err := slack.New(slack.Config{BotToken: slacktest.BotToken, SigningSecret: secret, APIURL: fake.APIURL(),
			MinEditInterval: 200 * time.Millisecond, FirstSendDebounce: 50 * time.Millisecond}, coretest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		n := 0
		where := func(conv string) (string, string) {
			parts := strings.SplitN(conv, ":", 4)
			return parts[2], parts[3]
		}
		return rendertest.Env{
			Sender: a.Sender(),
			NewConv: func() string {
				n++
				return slack.ConvKey(slacktest.TeamID, fmt.Sprintf("C%04d", n), fake.NextTS())
			},
			Flush: a.Sender().Flush,
			Messages: func(conv string) []rendertest.Message {
				ch, thread := where(conv)
				var out []rendertest.Message
				for _, m := range fake.BotReplies(ch, thread) {
					rm := rendertest.Message{ID: m.TS, Text: m.Plain()}
					for _, b := range m.Buttons() {
						rb := render.Button{Label: b.Label(), Data: b.Value}
						switch b.Style {
						case "primary":
							rb.Style = render.StylePrimary
						case "danger":
							rb.Style = render.StyleDanger
						}
						rm.Buttons = append(rm.Buttons, rb)
					}
					out = append(out, rm)
				}
				return out
			},
			Calls: func(conv string) rendertest.Calls {
				ch, thread := where(conv)
				var c rendertest.Calls
				for _, call := range fake.Calls("") {
					if !call.OK() || call.Channel != ch || call.ThreadTS != thread {
						continue
					}
					switch call.Method {
					case "chat.postMessage":
						c.Posts++
					case "chat.update":
						c.Edits++
					}
				}
				return c
			},
			Limits: a.Sender().Limits(),
		}
	})
}
