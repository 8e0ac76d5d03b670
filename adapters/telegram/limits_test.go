package telegram_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/policy"
)

// Issue 10, acceptance 10: with limits.runs_per_person_per_minute 10, the
// 11th message of one person within the minute gets the limit reply in the
// chat and is not stored (so it never runs); another person is answered as
// usual.
func TestRunLimitPerPerson(t *testing.T) {
	pol, err := policy.Parse("policy.yaml", []byte("limits:\n  runs_per_person_per_minute: 10\n"), policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	holder := policy.NewHolder(pol)
	s := newStack(t, func(_ *telegram.Config, c *core.Config) {
		c.Policy = holder
		c.Limiter = policy.NewLimiter(holder.RunsPerPersonPerMinute)
	})
	for i := range 10 {
		answer := fmt.Sprintf("answer number %d", i+1)
		s.llm.Push(llmfake.Reply{Text: answer})
		s.say(alice, fmt.Sprintf("question %d", i+1))
		s.finalDraft(alice.ID, answer)
	}
	eleventh := s.say(alice, "question 11")
	reply := s.waitMessage(alice.ID, "the limit reply", func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "You have started 10 runs in the last minute (limits.runs_per_person_per_minute)")
	})
	if len(reply.Buttons) != 0 {
		t.Errorf("limit reply has buttons: %+v", reply)
	}

	s.llm.Push(llmfake.Reply{Text: "mallory is answered"})
	s.say(mallory, "is payments up?")
	s.finalDraft(mallory.ID, "mallory is answered")
	if n := len(s.llm.Requests()); n != 11 {
		t.Errorf("the model was asked %d times, want 10 for alice and 1 for mallory", n)
	}

	// Nothing of the 11th message was stored: storing it now is a first.
	convs, err := s.store.Conversations(context.Background(), core.ConversationFilter{KeyPrefix: "telegram:" + strconv.Itoa(telegramtest.BotID) + ":" + strconv.FormatInt(alice.ID, 10)})
	if err != nil || len(convs) != 1 {
		t.Fatalf("alice's conversations = %+v, %v; want one", convs, err)
	}
	first, err := s.store.SaveInbound(context.Background(), core.Inbound{ConvKey: convs[0].Key,
		MessageID: strconv.Itoa(eleventh.Message.MessageID), User: core.Actor{ID: telegram.ActorID(alice.ID)}, Text: "question 11"})
	if err != nil || !first {
		t.Errorf("the 11th message was stored (SaveInbound again: first %v, %v)", first, err)
	}
	// Answered once: a refused message is not handed back to be delivered
	// (and refused) again.
	replies := 0
	for _, m := range s.tg.Messages(alice.ID) {
		if strings.Contains(m.Visible, "limits.runs_per_person_per_minute") {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d limit replies, want 1:\n%s", replies, s.dump(alice.ID))
	}
}
