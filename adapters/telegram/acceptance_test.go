package telegram_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

func words(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "w%03d", i)
	}
	return b.String()
}

// finalDraft waits for a message with exactly text and no buttons.
func (s *stack) finalDraft(chat int64, text string) telegramtest.Message {
	s.t.Helper()
	return s.waitMessage(chat, "the final answer", func(m telegramtest.Message) bool {
		return strings.TrimSpace(m.Visible) == strings.TrimSpace(text) && len(m.Buttons) == 0
	})
}

func succeeded(calls []telegramtest.Call) int {
	n := 0
	for _, c := range calls {
		if c.Code == 200 {
			n++
		}
	}
	return n
}

func TestStreamedReplyMakesOneSendAndAtMostThreeEdits(t *testing.T) {
	s := newStack(t) // Telegram's real rendering defaults: 1 s between edits, 300 ms debounce
	answer := words(200)
	s.llm.Push(llmfake.Reply{Text: answer, TokenDelay: 10 * time.Millisecond}) // 100 tokens/s
	s.say(alice, "summarise the incident")
	s.finalDraft(alice.ID, answer)
	// Let anything still in flight land before counting.
	if err := s.ad.Sender().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sends, edits := s.tg.CallsTo("sendMessage", alice.ID), s.tg.CallsTo("editMessageText", alice.ID)
	if succeeded(sends) != 1 || len(sends) != 1 {
		t.Errorf("sendMessage calls = %d, want 1", len(sends))
	}
	if len(edits) > 3 {
		t.Errorf("editMessageText calls = %d, want at most 3", len(edits))
	}
	if msgs := s.tg.Messages(alice.ID); len(msgs) != 1 || strings.TrimSpace(msgs[0].Visible) != answer {
		t.Errorf("chat shows %d messages; want exactly the answer once:\n%s", len(msgs), s.dump(alice.ID))
	}
}

func TestLongReplyWithCodeBlocksIsThreeMessages(t *testing.T) {
	s := newStack(t, func(c *telegram.Config, _ *core.Config) {
		c.MinEditInterval, c.FirstSendDebounce = 100*time.Millisecond, 50*time.Millisecond
	})
	answer, blocks := rendertest.LongAnswer(10000, 24)
	s.llm.Push(llmfake.Reply{Text: answer})
	s.say(alice, "write the runbook")
	s.waitMessage(alice.ID, "the end of the answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "p-end") && len(m.Buttons) == 0
	})
	if err := s.ad.Sender().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs := s.tg.Messages(alice.ID)
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3:\n%s", len(msgs), s.dump(alice.ID))
	}
	if n := succeeded(s.tg.CallsTo("sendMessage", alice.ID)); n != 3 {
		t.Errorf("%d messages sent, want 3 (no duplicates)", n)
	}
	var visible []string
	for i, m := range msgs {
		if m.ParseMode != "HTML" {
			t.Errorf("message %d was sent with parse mode %q, want HTML", i, m.ParseMode)
		}
		visible = append(visible, m.Visible)
	}
	rendertest.CheckWhole(t, answer, blocks, visible)
	if !strings.Contains(msgs[0].Visible, "error rates <1% & latency") || !strings.Contains(msgs[0].Visible, "replicas[0] <- ok && x > y") {
		t.Errorf("escaped characters did not survive:\n%s", msgs[0].Visible)
	}
}

func TestRateLimitDelaysNextCallToChat(t *testing.T) {
	s := newStack(t, func(c *telegram.Config, _ *core.Config) {
		c.MinEditInterval, c.FirstSendDebounce = 100*time.Millisecond, 20*time.Millisecond
	})
	s.tg.RateLimit("sendMessage", alice.ID, 2)
	answer := words(40)
	s.llm.Push(llmfake.Reply{Text: answer, TokenDelay: 5 * time.Millisecond})
	s.say(alice, "status of web?")
	s.finalDraft(alice.ID, answer)
	var limited time.Time
	var next time.Time
	for _, c := range s.tg.Calls() {
		if c.Chat() != alice.ID {
			continue
		}
		switch {
		case c.Code == 429 && limited.IsZero():
			limited = c.Time
		case !limited.IsZero() && next.IsZero():
			next = c.Time
		}
	}
	if limited.IsZero() || next.IsZero() {
		t.Fatalf("want a 429 and a later call to the chat; calls: %+v", s.tg.Calls())
	}
	if gap := next.Sub(limited); gap < 2*time.Second {
		t.Errorf("next call to the chat %s after the 429, want at least retry_after=2s", gap)
	}
	if n := succeeded(s.tg.CallsTo("sendMessage", alice.ID)); n != 1 {
		t.Errorf("%d messages sent, want 1 (none twice)", n)
	}
	if msgs := s.tg.Messages(alice.ID); len(msgs) != 1 {
		t.Errorf("chat shows %d messages, want 1:\n%s", len(msgs), s.dump(alice.ID))
	}
}

// scaleScript makes the model load the k8s write tools, ask to scale web,
// and, once the call is answered, say so.
func (s *stack) scaleScript() {
	s.llm.Push(
		toolCalls(call("c0", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`)),
		llmfake.Reply{Text: "I will scale web to 3 replicas.", ToolCalls: []llmfake.ToolCall{call("c1", "scale_deployment", `{"name":"web","replicas":3}`)}},
		llmfake.Reply{Text: "web now has 3 replicas."},
	)
}

func TestApprovalCardButtons(t *testing.T) {
	s := newStack(t)
	s.scaleScript()
	s.say(alice, "scale web to 3")
	card := s.card(alice.ID)
	if !strings.Contains(card.Visible, "scale_deployment") || !strings.Contains(card.Visible, "@alice") {
		t.Errorf("card = %q, want the tool and the requester", card.Visible)
	}
	for _, b := range card.Buttons {
		if len(b.Data) > 64 || strings.Contains(b.Data, "replicas") {
			t.Errorf("button data %q: want a short reference, never the arguments", b.Data)
		}
	}
	approve := card.Buttons[0].Data
	_, approvalID, _ := render.ParseButtonData(approve)

	t.Run("SomeoneElseIsRefusedAndAudited", func(t *testing.T) {
		// eve may not use the bot; mallory may, but is neither the
		// requester nor an approver.
		for _, user := range []*tgbotapi.User{eve, mallory} {
			up := s.tg.Click(alice.ID, card.ID, user, approve)
			ans := s.waitAnswer(up.CallbackQuery.ID)
			if !ans.ShowAlert || !strings.Contains(ans.Text, "not allowed") {
				t.Errorf("%s's click answered %+v, want a not-allowed alert", user.UserName, ans)
			}
		}
		entries, err := s.store.Audit(context.Background(), core.AuditFilter{ApprovalID: approvalID})
		if err != nil {
			t.Fatal(err)
		}
		refused := 0
		for _, e := range entries {
			if e.Kind == core.AuditRefused {
				refused++
			}
		}
		if refused != 2 {
			t.Errorf("%d refused attempts audited, want 2: %+v", refused, entries)
		}
		if n := len(s.k8s.Calls()); n != 0 {
			t.Errorf("the tool ran %d times after refused clicks", n)
		}
	})

	t.Run("ApproverClickRunsTheTool", func(t *testing.T) {
		up := s.tg.Click(alice.ID, card.ID, bob, approve)
		if ans := s.waitAnswer(up.CallbackQuery.ID); ans.ShowAlert || !strings.Contains(ans.Text, "Approved") {
			t.Errorf("bob's click answered %+v", ans)
		}
		calls := s.k8s.WaitCalls(1, 10*time.Second)
		if len(calls) != 1 || calls[0].Tool != "scale_deployment" {
			t.Fatalf("tool calls = %+v, want scale_deployment once", calls)
		}
		s.waitMessage(alice.ID, "the card to show who approved", func(m telegramtest.Message) bool {
			return m.ID == card.ID && strings.Contains(m.Visible, "Approved by @bob") && len(m.Buttons) == 0
		})
		s.waitMessage(alice.ID, "the answer after the tool ran", func(m telegramtest.Message) bool {
			return strings.Contains(m.Visible, "web now has 3 replicas.") && len(m.Buttons) == 0
		})
	})

	t.Run("SecondClickSaysAlreadyDecided", func(t *testing.T) {
		up := s.tg.Click(alice.ID, card.ID, alice, card.Buttons[1].Data)
		if ans := s.waitAnswer(up.CallbackQuery.ID); !strings.Contains(strings.ToLower(ans.Text), "already decided") || !strings.Contains(ans.Text, "@bob") {
			t.Errorf("second click answered %+v, want already decided by @bob", ans)
		}
		if n := len(s.k8s.Calls()); n != 1 {
			t.Errorf("tool ran %d times, want once", n)
		}
	})
}

func TestApprovalCardShowsExpired(t *testing.T) {
	s := newStack(t, func(_ *telegram.Config, c *core.Config) { c.ApprovalExpiry = 500 * time.Millisecond })
	s.scaleScript()
	s.say(alice, "scale web to 3")
	card := s.card(alice.ID)
	time.Sleep(600 * time.Millisecond)
	up := s.tg.Click(alice.ID, card.ID, alice, card.Buttons[0].Data)
	if ans := s.waitAnswer(up.CallbackQuery.ID); !strings.Contains(ans.Text, "expired") {
		t.Errorf("late click answered %+v, want expired", ans)
	}
	s.waitMessage(alice.ID, "the card to show it expired", func(m telegramtest.Message) bool {
		return m.ID == card.ID && strings.Contains(m.Visible, "Expired") && len(m.Buttons) == 0
	})
	if n := len(s.k8s.Calls()); n != 0 {
		t.Errorf("an expired request ran the tool %d times", n)
	}
}

func TestStopCommandEndsRunMidStream(t *testing.T) {
	s := newStack(t, func(c *telegram.Config, _ *core.Config) {
		c.MinEditInterval, c.FirstSendDebounce = 100*time.Millisecond, 20*time.Millisecond
	})
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Looking at the deployment history " + words(50), Hold: hold})
	s.say(alice, "why is web slow?")
	draft := s.waitMessage(alice.ID, "a draft with a Stop button", func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "Looking") && len(m.Buttons) == 1
	})
	if act, _, _ := render.ParseButtonData(draft.Buttons[0].Data); act != render.ActionStop {
		t.Errorf("draft button %+v, want Stop", draft.Buttons[0])
	}
	s.say(alice, "/stop")
	s.waitMessage(alice.ID, "the draft to say it was stopped", func(m telegramtest.Message) bool {
		return m.ID == draft.ID && strings.Contains(m.Visible, "Stopped") && len(m.Buttons) == 0
	})
	st, err := s.eng.Status(context.Background(), telegram.ConvKey(telegramtest.BotID, alice.ID, ""))
	if err != nil || st.ActiveRun != nil {
		t.Errorf("status after stop = %+v, %v; want no active run", st, err)
	}
}

func TestStopButtonEndsRun(t *testing.T) {
	s := newStack(t, func(c *telegram.Config, _ *core.Config) {
		c.MinEditInterval, c.FirstSendDebounce = 100*time.Millisecond, 20*time.Millisecond
	})
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Looking " + words(20), Hold: hold})
	s.say(alice, "why is web slow?")
	draft := s.waitMessage(alice.ID, "a draft with a Stop button", func(m telegramtest.Message) bool { return len(m.Buttons) == 1 })
	up := s.tg.Click(alice.ID, draft.ID, alice, draft.Buttons[0].Data)
	if ans := s.waitAnswer(up.CallbackQuery.ID); !strings.Contains(ans.Text, "Stopping") {
		t.Errorf("Stop click answered %+v", ans)
	}
	s.waitMessage(alice.ID, "the draft to say it was stopped", func(m telegramtest.Message) bool {
		return m.ID == draft.ID && strings.Contains(m.Visible, "Stopped") && len(m.Buttons) == 0
	})
}

func TestUserNotAllowedIsRefusedAndModelNotCalled(t *testing.T) {
	s := newStack(t)
	s.say(eve, "delete the prod namespace")
	refusal := s.waitMessage(eve.ID, "a refusal", func(m telegramtest.Message) bool { return strings.Contains(m.Visible, "Sorry") })
	if !strings.Contains(refusal.Visible, fmt.Sprint(eve.ID)) {
		t.Errorf("refusal %q should tell the user their id", refusal.Visible)
	}
	s.say(eve, "please?")
	s.llm.Push(llmfake.Reply{Text: "Hi alice."})
	s.say(alice, "hello") // handled after eve's messages
	s.finalDraft(alice.ID, "Hi alice.")
	reqs := s.llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model requests = %d, want only alice's", len(reqs))
	}
	for _, m := range reqs[0].Messages {
		if strings.Contains(m.Content, "prod namespace") || strings.Contains(m.Content, "please?") {
			t.Errorf("eve's text reached the model: %q", m.Content)
		}
	}
	if n := len(s.tg.Messages(eve.ID)); n != 1 {
		t.Errorf("eve got %d messages, want one refusal", n)
	}
}

func TestSpecialCharactersAndUnbalancedMarkdownAreDelivered(t *testing.T) {
	answer := "Compare a < b && c > d, then **fix the `config & <tags> _now"
	t.Run("HTML", func(t *testing.T) {
		s := newStack(t)
		s.llm.Push(llmfake.Reply{Text: answer})
		s.say(alice, "go")
		m := s.waitMessage(alice.ID, "the answer", func(m telegramtest.Message) bool { return len(m.Buttons) == 0 && strings.Contains(m.Visible, "_now") })
		if m.ParseMode != "HTML" || m.Visible != answer {
			t.Errorf("got %q (%s), want the text as written, formatted", m.Visible, m.ParseMode)
		}
	})
	t.Run("PlainFallback", func(t *testing.T) {
		s := newStack(t)
		s.tg.RejectEntities("sendMessage", 100)
		s.tg.RejectEntities("editMessageText", 100)
		s.llm.Push(llmfake.Reply{Text: answer})
		s.say(alice, "go")
		m := s.waitMessage(alice.ID, "the answer", func(m telegramtest.Message) bool { return len(m.Buttons) == 0 && strings.Contains(m.Visible, "_now") })
		if m.ParseMode != "" || m.Visible != answer {
			t.Errorf("got %q (%q), want the raw text, plain", m.Visible, m.ParseMode)
		}
		rejected := 0
		for _, c := range s.tg.CallsTo("sendMessage", alice.ID) {
			if c.Code == 400 {
				rejected++
			}
		}
		if rejected == 0 {
			t.Error("the fallback path was not exercised: no 400 for entities")
		}
		if n := len(s.tg.Messages(alice.ID)); n != 1 {
			t.Errorf("%d messages, want 1", n)
		}
	})
}

// Who may press Stop (policy.MayStop): not eve, who may not talk to the
// bot; bob, an approver who may not talk to it either, may.
func TestStopButtonPressedByStrangerAndApprover(t *testing.T) {
	s := newStack(t, func(c *telegram.Config, _ *core.Config) {
		c.MinEditInterval, c.FirstSendDebounce = 100*time.Millisecond, 20*time.Millisecond
	})
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Looking " + words(20), Hold: hold})
	s.say(alice, "why is web slow?")
	draft := s.waitMessage(alice.ID, "a draft with a Stop button", func(m telegramtest.Message) bool { return len(m.Buttons) == 1 })
	up := s.tg.Click(alice.ID, draft.ID, eve, draft.Buttons[0].Data)
	if ans := s.waitAnswer(up.CallbackQuery.ID); !strings.Contains(ans.Text, "not allowed to stop") {
		t.Errorf("eve's Stop click answered %+v", ans)
	}
	st, err := s.eng.Status(context.Background(), telegram.ConvKey(telegramtest.BotID, alice.ID, ""))
	if err != nil || st.ActiveRun == nil {
		t.Fatalf("status after eve's click = %+v, %v; want the run still active", st, err)
	}
	up = s.tg.Click(alice.ID, draft.ID, bob, draft.Buttons[0].Data)
	if ans := s.waitAnswer(up.CallbackQuery.ID); !strings.Contains(ans.Text, "Stopping") {
		t.Errorf("bob's Stop click answered %+v", ans)
	}
	s.waitMessage(alice.ID, "the draft to say it was stopped", func(m telegramtest.Message) bool {
		return m.ID == draft.ID && strings.Contains(m.Visible, "Stopped") && len(m.Buttons) == 0
	})
}
