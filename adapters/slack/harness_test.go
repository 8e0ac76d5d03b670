package slack_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// The acceptance tests run the whole stack through public surfaces: the
// Slack fake (Web API + Socket Mode), the adapter, the real engine with the
// SQLite store, the OpenAI-compatible fake model and the in-process MCP
// fixture.

const (
	chOps   = "C0OPS"
	chOther = "C0OTHER"
	dmAlice = "D0ALICE"
	alice   = "U0ALICE"
	bob     = "U0BOB" // a configured approver
	mallory = "U0MALLORY"
	secret  = "8f742231b10e8888abcd99yyyzzz85a5"
)

type stack struct {
	t     *testing.T
	fake  *slacktest.Server
	llm   *llmfake.Server
	k8s   *mcpfake.Fixture
	store *sqlite.Store
	eng   *core.Engine
	a     *slack.Adapter
	http  *httptest.Server // HTTP mode only

	cancel   context.CancelFunc
	runDone  chan error
	downOnce sync.Once
}

type option func(*slack.Config, *core.Config)

// httpMode configures HTTP mode (no app token, a signing secret).
func httpMode(c *slack.Config, _ *core.Config) {
	c.AppToken = ""
	c.SigningSecret = secret
}

func newStack(t *testing.T, opts ...option) *stack {
	t.Helper()
	s := &stack{t: t, fake: slacktest.New(t), runDone: make(chan error, 1)}
	base := enginetest.New(t)
	s.llm, s.k8s, s.store = base.LLM, base.K8s, base.Store
	for id, name := range map[string]string{alice: "alice", bob: "bob", mallory: "mallory"} {
		s.fake.AddUser(id, name)
	}
	cfg := slack.Config{
		BotToken: slacktest.BotToken, AppToken: slacktest.AppToken, APIURL: s.fake.APIURL(),
		Channels: []string{chOps}, AllowedUsers: nil, Approvers: []string{bob},
	}
	ccfg := enginetest.Config()
	for _, o := range opts {
		o(&cfg, &ccfg)
	}
	ccfg.Policy = core.DefaultPolicy{Approvers: map[string][]string{"slack": cfg.Approvers}}

	// The engine needs the adapter's sender; the adapter gets the engine
	// with Run (and Handler).
	var err error
	if s.a, err = slack.New(cfg, coretest.Logger(t)); err != nil {
		t.Fatal(err)
	}
	s.eng = enginetest.Engine(t, ccfg, base.Deps(t, s.a.Sender()))
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.runDone <- s.a.Run(ctx, s.eng) }()
	if s.a.SocketMode() {
		s.fake.WaitConnected(t)
	} else {
		s.http = httptest.NewServer(s.a.Handler(s.eng))
		t.Cleanup(s.http.Close)
	}
	t.Cleanup(s.shutdown)
	return s
}

// shutdown stops everything in the order opsgate serve does: receiving,
// then the adapter's acknowledged work, then the engine's runs, then
// rendering. After it, what the fakes recorded is final.
func (s *stack) shutdown() {
	s.downOnce.Do(func() {
		s.fake.Eventually(s.t, "every envelope acknowledged", func() bool { return len(s.fake.Unacked()) == 0 })
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		s.cancel()
		if err := <-s.runDone; err != nil {
			s.t.Errorf("Run: %v", err)
		}
		if err := s.eng.Wait(ctx); err != nil {
			s.t.Errorf("engine wait: %v", err)
		}
		if err := s.a.Close(); err != nil {
			s.t.Errorf("adapter close: %v", err)
		}
		if err := s.eng.Shutdown(ctx); err != nil {
			s.t.Errorf("engine shutdown: %v", err)
		}
	})
}

// loadWriteTools lets a conversation use the k8s write tools from its
// first message, as if the model had loaded them.
func (s *stack) loadWriteTools(key string) {
	s.t.Helper()
	ctx := context.Background()
	c, err := s.store.Conversation(ctx, key)
	if err != nil {
		s.t.Fatal(err)
	}
	c.Toolsets = []core.Toolset{{Name: "k8s", Write: true}}
	if err := s.store.Apply(ctx, core.Batch{Conversation: &c}); err != nil {
		s.t.Fatal(err)
	}
}

// postAsBot posts as the bot straight to the fake, as an earlier process
// of opsgate would have.
func postAsBot(t *testing.T, fake *slacktest.Server, channel, thread, text string) {
	t.Helper()
	form := url.Values{"token": {slacktest.BotToken}, "channel": {channel}, "thread_ts": {thread}, "text": {text}}
	resp, err := http.PostForm(fake.APIURL()+"chat.postMessage", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func key(channel, thread string) string { return slack.ConvKey(slacktest.TeamID, channel, thread) }

// waitReplies waits until the bot's messages in a thread satisfy cond.
func (s *stack) waitReplies(channel, thread, what string, cond func([]slacktest.Message) bool) []slacktest.Message {
	s.t.Helper()
	var got []slacktest.Message
	s.fake.Eventually(s.t, what, func() bool {
		got = s.fake.BotReplies(channel, thread)
		return cond(got)
	})
	return got
}

// waitFinal waits until the thread's last bot message ends with want, with
// no buttons left (a resumed run's message starts with its tool lines).
func (s *stack) waitFinal(channel, thread, want string) []slacktest.Message {
	s.t.Helper()
	return s.waitReplies(channel, thread, "the final answer "+want, func(ms []slacktest.Message) bool {
		if len(ms) == 0 {
			return false
		}
		last := ms[len(ms)-1]
		return strings.HasSuffix(strings.TrimSpace(last.Plain()), want) && len(last.Buttons()) == 0
	})
}

// waitCard waits for the approval card of a thread.
func (s *stack) waitCard(channel, thread string) slacktest.Message {
	s.t.Helper()
	var card slacktest.Message
	s.waitReplies(channel, thread, "an approval card", func(ms []slacktest.Message) bool {
		for _, m := range ms {
			if _, ok := m.Button("approve"); ok {
				card = m
				return true
			}
		}
		return false
	})
	return card
}

func words(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(prefix)
		b.WriteString(strings.Repeat("x", i%5))
	}
	return b.String() + "."
}
