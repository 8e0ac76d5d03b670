package telegram_test

import (
	"context"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// The people of the tests: alice and mallory may talk to the bot, bob may
// approve, eve is nobody.
var (
	alice   = telegramtest.User(111, "alice")
	bob     = telegramtest.User(222, "bob")
	mallory = telegramtest.User(333, "mallory")
	eve     = telegramtest.User(444, "eve")
)

// stack is opsgate with a Telegram front: the Bot API fake, the adapter,
// the real engine over SQLite, an OpenAI-compatible fake model and an
// in-process MCP server.
type stack struct {
	t     *testing.T
	tg    *telegramtest.Server
	llm   *llmfake.Server
	k8s   *mcpfake.Fixture
	store *sqlite.Store
	base  *enginetest.Stack // the core the adapter runs on; it survives a restart
	eng   *core.Engine
	ad    *telegram.Adapter
	stop  func()
}

type stackOption func(*telegram.Config, *core.Config)

func newStack(t *testing.T, opts ...stackOption) *stack {
	t.Helper()
	s := &stack{t: t, tg: telegramtest.New(t)}
	s.base = enginetest.New(t)
	s.llm, s.k8s, s.store = s.base.LLM, s.base.K8s, s.base.Store
	s.start(opts...)
	return s
}

// start builds and runs an adapter and an engine over the stack's store,
// fakes and MCP server; calling it again is a restart.
func (s *stack) start(opts ...stackOption) {
	t := s.t
	tcfg := telegram.Config{
		Token: telegramtest.Token, APIURL: s.tg.URL,
		AllowedUsers: []int64{alice.ID, mallory.ID}, Approvers: []int64{bob.ID},
		PollTimeout: time.Second,
	}
	ccfg := enginetest.Config()
	for _, o := range opts {
		o(&tcfg, &ccfg)
	}
	ad, err := telegram.New(tcfg, coretest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ccfg.Policy = core.DefaultPolicy{Approvers: map[string][]string{"telegram": approverIDs(tcfg.Approvers)}}
	eng := enginetest.Engine(t, ccfg, s.base.Deps(t, ad.Sender()))
	s.eng, s.ad = eng, ad
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, eng) }()
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		eng.Shutdown(sctx)
		if err := ad.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	t.Cleanup(s.stop)
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitMessage waits for a message in chat that match accepts.
func (s *stack) waitMessage(chat int64, what string, match func(telegramtest.Message) bool) telegramtest.Message {
	s.t.Helper()
	var got telegramtest.Message
	waitFor(s.t, 20*time.Second, what, func() bool {
		for _, m := range s.tg.Messages(chat) {
			if match(m) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

func (s *stack) dump(chat int64) string {
	var b strings.Builder
	for _, m := range s.tg.Messages(chat) {
		b.WriteString("--- message " + m.Visible + "\n")
	}
	return b.String()
}

func (s *stack) say(from *tgbotapi.User, text string) tgbotapi.Update {
	return s.tg.SendText(telegramtest.PrivateChat(from.ID), from, text)
}

// card waits for an approval card in chat and returns it.
func (s *stack) card(chat int64) telegramtest.Message {
	s.t.Helper()
	return s.waitMessage(chat, "an approval card", func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "Approval needed") && len(m.Buttons) == 2
	})
}

func (s *stack) waitAnswer(queryID string) telegramtest.Answer {
	s.t.Helper()
	var got telegramtest.Answer
	waitFor(s.t, 10*time.Second, "the callback answer", func() bool {
		for _, a := range s.tg.Answers() {
			if a.QueryID == queryID {
				got = a
				return true
			}
		}
		return false
	})
	return got
}

func call(id, name, args string) llmfake.ToolCall {
	return llmfake.ToolCall{ID: id, Name: name, Arguments: args}
}

func toolCalls(calls ...llmfake.ToolCall) llmfake.Reply { return llmfake.Reply{ToolCalls: calls} }

// approverIDs are telegram.approvers as identities, as the command line
// gives them to the policy.
func approverIDs(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = telegram.ActorID(id)
	}
	return out
}
