package discord_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// The acceptance tests run the whole stack: the Discord fake (REST and
// gateway), the adapter, the real engine over SQLite, the openai-go client
// against the scripted LLM server, and the in-process MCP server.

const (
	guild     = "1200000000000000001"
	channel   = "1300000000000000001"
	elsewhere = "1300000000000000099" // a channel of the guild not in discord.channels
	dmAlice   = "1300000000000000050"
	dmMallory = "1300000000000000051"
)

var (
	alice   = discordtest.User{ID: "1400000000000000001", Name: "alice"}
	bob     = discordtest.User{ID: "1400000000000000002", Name: "bob"}     // an approver
	mallory = discordtest.User{ID: "1400000000000000003", Name: "mallory"} // neither requester nor approver
)

type stack struct {
	t     *testing.T
	fake  *discordtest.Server
	llm   *llmfake.Server
	k8s   *mcpfake.Fixture
	store *sqlite.Store
	eng   *core.Engine
	ad    *discord.Adapter
	cfg   discord.Config
	// logs holds what the adapter logged.
	logs coretest.SyncBuffer
	// atEnd runs after the adapter has closed, when nothing it started is
	// still going: checks that something never happened go there.
	atEnd []func()
}

// newStack starts the stack; tune changes the engine's configuration.
func newStack(t *testing.T, tune ...func(*core.Config)) *stack {
	t.Helper()
	s := &stack{t: t, fake: discordtest.New(t, discordtest.WithHeartbeat(500*time.Millisecond))}
	base := enginetest.New(t)
	s.llm, s.k8s, s.store = base.LLM, base.K8s, base.Store
	s.fake.AddChannel(guild, channel, "incidents")
	s.fake.AddChannel(guild, elsewhere, "random")
	s.fake.AddDM(dmAlice, alice)
	s.fake.AddDM(dmMallory, mallory)
	s.cfg = discord.Config{
		Token: s.fake.Token, APIURL: s.fake.URL,
		Guilds: []string{guild}, Channels: []string{channel},
		AllowedUsers: []string{alice.ID}, Approvers: []string{bob.ID},
	}
	log := slog.New(slog.NewMultiHandler(coretest.Logger(t).Handler(), slog.NewTextHandler(&s.logs, nil)))
	ad, err := discord.New(s.cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	s.ad = ad
	ccfg := enginetest.Config()
	ccfg.Policy = core.DefaultPolicy{Approvers: map[string][]string{"discord": s.cfg.Approvers}}
	for _, f := range tune {
		f(&ccfg)
	}
	s.eng = enginetest.Engine(t, ccfg, base.Deps(t, ad))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, s.eng) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		s.eng.Shutdown(sctx)
		if err := ad.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, f := range s.atEnd {
			f()
		}
		checkWriteRate(t, s.fake.Calls())
	})
	if !s.fake.Wait(10*time.Second, s.fake.Connected) {
		t.Fatal("the adapter did not connect to the gateway")
	}
	return s
}

// say posts a message as u and fails the test if it cannot be dispatched.
func (s *stack) say(ch string, u discordtest.User, text string) discordtest.Message {
	s.t.Helper()
	m, err := s.fake.Say(ch, u, text)
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

// thread waits for the thread started from message id.
func (s *stack) thread(parent, id string) discordtest.Channel {
	s.t.Helper()
	var th discordtest.Channel
	ok := s.fake.Wait(10*time.Second, func() bool {
		for _, c := range s.fake.Threads(parent) {
			if c.ID == id {
				th = c
				return true
			}
		}
		return false
	})
	if !ok {
		s.t.Fatalf("no thread was started from message %s; calls:\n%s", id, dumpCalls(s.fake.Calls()))
	}
	return th
}

// waitMessages waits until the bot's messages in ch satisfy cond, and
// returns them.
func (s *stack) waitMessages(ch string, what string, cond func([]discordtest.Message) bool) []discordtest.Message {
	s.t.Helper()
	var msgs []discordtest.Message
	if !s.fake.Wait(20*time.Second, func() bool {
		msgs = botMessages(s.fake.Messages(ch), s.fake.Bot.ID)
		return cond(msgs)
	}) {
		s.t.Fatalf("timed out waiting for %s in channel %s; messages:\n%s", what, ch, dumpMessages(msgs))
	}
	return msgs
}

// waitFinal waits until the bot's messages in ch end with text and carry
// no buttons (the run is over).
func (s *stack) waitFinal(ch, text string) []discordtest.Message {
	s.t.Helper()
	return s.waitMessages(ch, "the final text "+quote(text), func(ms []discordtest.Message) bool {
		if len(ms) == 0 || len(ms[len(ms)-1].Buttons) != 0 {
			return false
		}
		return strings.TrimSpace(ms[len(ms)-1].Content) == text
	})
}

func botMessages(ms []discordtest.Message, bot string) []discordtest.Message {
	var out []discordtest.Message
	for _, m := range ms {
		if m.Author.ID == bot && m.Interaction == "" {
			out = append(out, m)
		}
	}
	return out
}

// checkWriteRate fails when a channel got more than 5 message writes in
// any 5 s, or when a write was answered 429 that the test did not program.
func checkWriteRate(t *testing.T, calls []discordtest.Call) {
	t.Helper()
	by := map[string][]time.Time{}
	for _, c := range calls {
		if c.Route != discordtest.RouteCreateMessage && c.Route != discordtest.RouteEditMessage || c.Status == 429 {
			continue
		}
		ts := append(by[c.Channel], c.Time)
		by[c.Channel] = ts
		if len(ts) > 5 {
			if d := ts[len(ts)-1].Sub(ts[len(ts)-6]); d < 5*time.Second {
				t.Errorf("channel %s: 6 message writes within %v (Discord allows 5 per 5 s)", c.Channel, d)
			}
		}
	}
}

func quote(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return "\"" + s + "\""
}

func dumpMessages(ms []discordtest.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("  [" + m.ID + "] " + quote(m.Content))
		for _, bt := range m.Buttons {
			b.WriteString(" <" + bt.Label + ":" + bt.CustomID + ">")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func dumpCalls(cs []discordtest.Call) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("  " + c.Time.Format("15:04:05.000") + " " + c.Method + " " + c.Path + " -> " + itoa(c.Status) + "\n")
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// words returns an answer of n numbered words.
func words(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(prefix)
		b.WriteString(itoa(i))
	}
	return b.String() + "."
}
