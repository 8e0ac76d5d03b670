package discord_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Outside discord.guilds / discord.channels / discord.allowed_users
// nothing runs: mentions and commands get a short refusal, other messages
// are ignored.
func TestOutsideAllowlistNothingRuns(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const otherGuild, otherChannel = "1200000000000000077", "1300000000000000077"
	s.fake.AddChannel(otherGuild, otherChannel, "general")

	s.say(channel, alice, "no mention here, just chatting")
	s.say(elsewhere, alice, s.fake.Mention()+" restart web")
	s.say(otherChannel, alice, s.fake.Mention()+" restart web")
	s.say(dmMallory, mallory, "restart web")
	token, err := s.fake.Command(elsewhere, alice, "request", map[string]string{"text": "restart web"})
	if err != nil {
		t.Fatal(err)
	}

	for _, ch := range []string{elsewhere, otherChannel} {
		s.waitMessages(ch, "a refusal", func(ms []discordtest.Message) bool {
			return len(ms) == 1 && strings.Contains(ms[0].Content, "only work in the channels")
		})
	}
	s.waitMessages(dmMallory, "a refusal", func(ms []discordtest.Message) bool {
		return len(ms) == 1 && strings.Contains(ms[0].Content, "not allowed")
	})
	var it discordtest.Interaction
	s.fake.Wait(10*time.Second, func() bool {
		it, _ = s.fake.Interaction(token)
		m, _ := s.fake.Message(elsewhere, it.Original)
		return strings.Contains(m.Content, "only work in the channels")
	})
	if m, _ := s.fake.Message(elsewhere, it.Original); !strings.Contains(m.Content, "only work in the channels") {
		t.Errorf("command outside the allowlist answered %q, want a refusal", m.Content)
	}
	// In a guild that is not allowed, the refusal is private from the start.
	token, err = s.fake.Command(otherChannel, mallory, "request", map[string]string{"text": "restart web"})
	if err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, s, mallory, "only work in the channels")

	// The message without a mention was queued before everything above.
	for _, ch := range []string{channel, elsewhere, otherChannel} {
		if th := s.fake.Threads(ch); len(th) != 0 {
			t.Errorf("threads were opened in %s: %+v", ch, th)
		}
	}
	if got := botMessages(s.fake.Messages(channel), s.fake.Bot.ID); len(got) != 0 {
		t.Errorf("the bot answered a message without a mention:\n%s", dumpMessages(got))
	}
	if n := len(s.llm.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

// A direct message from an allowed user runs in the DM itself.
func TestDirectMessageFromAllowedUser(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "All green."})
	s.say(dmAlice, alice, "is prod healthy?")
	s.waitFinal(dmAlice, "All green.")
	c, err := s.store.Conversation(context.Background(), discord.ConvKey("", dmAlice))
	if err != nil || c.Key != "discord:@me:"+dmAlice {
		t.Errorf("conversation = %+v, %v", c, err)
	}
}

// /opsgate status answers privately; /opsgate stop and "stop" stop the run.
func TestStopAndStatusCommands(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	hold := make(chan struct{})
	defer close(hold)
	s.llm.Push(llmfake.Reply{Text: "Looking at the nodes " + words("node", 20), Hold: hold})
	m := s.say(channel, alice, s.fake.Mention()+" look at the nodes")
	th := s.thread(channel, m.ID)
	s.waitMessages(th.ID, "the draft with a Stop button", func(ms []discordtest.Message) bool {
		return len(ms) == 1 && len(ms[0].Buttons) == 1
	})

	token, err := s.fake.Command(th.ID, bob, "status", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.fake.Wait(10*time.Second, func() bool {
		for _, e := range s.fake.Ephemerals(bob.ID) {
			if strings.Contains(e.Content, "is running") {
				return true
			}
		}
		return false
	})
	if it, _ := s.fake.Interaction(token); it.AckType != discordtest.CallbackDeferredMessage {
		t.Errorf("status acknowledged with %d, want a deferred response", it.AckType)
	}
	if e := s.fake.Ephemerals(bob.ID); len(e) != 1 || !strings.Contains(e[0].Content, "▶️ Run `") {
		t.Errorf("status = %+v, want one private answer about the run", e)
	}

	token, err = s.fake.Command(th.ID, bob, "stop", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.waitMessages(th.ID, "the stopped draft", func(ms []discordtest.Message) bool {
		return len(ms) == 1 && len(ms[0].Buttons) == 0 && strings.Contains(strings.ToLower(ms[0].Content), "stopped")
	})
	s.fake.Wait(10*time.Second, func() bool {
		it, _ := s.fake.Interaction(token)
		m, _ := s.fake.Message(th.ID, it.Original)
		return strings.Contains(m.Content, "Stopped by <@"+bob.ID+">")
	})
	it, _ := s.fake.Interaction(token)
	if m, _ := s.fake.Message(th.ID, it.Original); !strings.Contains(m.Content, "Stopped by") || m.Ephemeral {
		t.Errorf("stop answered %+v, want a public \"Stopped by\"", m)
	}

	// "stop" as a message when nothing runs says so.
	s.say(th.ID, alice, "stop")
	s.waitMessages(th.ID, "nothing to stop", func(ms []discordtest.Message) bool {
		return len(ms) == 2 && strings.Contains(ms[1].Content, "Nothing is running")
	})
}

// A message Discord sends again (after a reconnect) opens one thread and
// one run.
func TestReplayedMentionIsHandledOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "Once."}, llmfake.Reply{Text: "Twice?"})
	m := s.say(channel, alice, s.fake.Mention()+" say once")
	th := s.thread(channel, m.ID)
	s.waitFinal(th.ID, "Once.")
	s.fake.Replay(m)
	// The channel's messages are handled in order: once the next mention
	// has its thread and answer, the replay has been dealt with.
	m2 := s.say(channel, alice, s.fake.Mention()+" say twice")
	th2 := s.thread(channel, m2.ID)
	s.waitFinal(th2.ID, "Twice?")
	if n := len(s.llm.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	if n := len(s.fake.CallsTo(discordtest.RouteStartThread)); n != 2 {
		t.Errorf("%d thread creations, want 2", n)
	}
	if msgs := botMessages(s.fake.Messages(th.ID), s.fake.Bot.ID); len(msgs) != 1 {
		t.Errorf("first thread:\n%s", dumpMessages(msgs))
	}
}

// Start-up registers /opsgate in the configured guild and identifies with
// the intents the adapter needs.
func TestStartupRegistersCommandAndIntents(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ids := s.fake.Identifies()
	if len(ids) != 1 {
		t.Fatalf("%d identifies, want 1", len(ids))
	}
	const guilds, guildMessages, dms, content = 1 << 0, 1 << 9, 1 << 12, 1 << 15
	if want := guilds | guildMessages | dms | content; ids[0].Intents&want != want {
		t.Errorf("intents %b lack some of %b", ids[0].Intents, want)
	}
	if !s.fake.Wait(5*time.Second, func() bool { return s.fake.Heartbeats() > 0 }) {
		t.Error("no heartbeat reached the gateway")
	}
	if !s.fake.Wait(5*time.Second, func() bool { return len(s.fake.Commands(guild)) == 1 }) {
		t.Fatalf("commands = %v, want /opsgate in guild %s", s.fake.Commands(guild), guild)
	}
	cmd := s.fake.Commands(guild)[0]
	var subs []string
	for _, o := range cmd["options"].([]any) {
		subs = append(subs, o.(map[string]any)["name"].(string))
	}
	if cmd["name"] != "opsgate" || strings.Join(subs, ",") != "request,stop,status" {
		t.Errorf("command = %v, want opsgate with request, stop and status", cmd)
	}
	// Usable in guilds (0) and in DMs with the bot (1), said the current
	// way (contexts), not with the deprecated dm_permission.
	if ctxs := fmt.Sprint(cmd["contexts"]); ctxs != "[0 1]" || cmd["dm_permission"] != nil {
		t.Errorf("command contexts = %s, dm_permission = %v; want [0 1] and none", ctxs, cmd["dm_permission"])
	}
	if len(s.fake.Commands("")) != 0 {
		t.Errorf("registered globally although guilds are configured")
	}
}

// A bot without the Message Content intent enabled fails at start-up with
// a message that says what to do.
func TestRefusedIntentsFailRun(t *testing.T) {
	t.Parallel()
	fake := discordtest.New(t)
	fake.DenyPrivilegedIntents()
	ad, err := discord.New(discord.Config{Token: fake.Token, APIURL: fake.URL, Guilds: []string{guild}}, coretest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = ad.Run(ctx, idleEngine{})
	if err == nil || !strings.Contains(err.Error(), "Message Content intent") {
		t.Errorf("Run = %v, want an error about the Message Content intent", err)
	}
	if ctx.Err() != nil {
		t.Errorf("Run kept retrying a refusal that retrying cannot fix")
	}
	ad.Close()
}

// idleEngine is an engine that is never reached.
type idleEngine struct{}

func (idleEngine) Handle(context.Context, core.Inbound) error          { return nil }
func (idleEngine) Stop(context.Context, string) bool                   { return false }
func (idleEngine) Status(context.Context, string) (core.Status, error) { return core.Status{}, nil }
func (idleEngine) Decide(context.Context, core.Decision) (core.Approval, error) {
	return core.Approval{}, core.ErrNotFound
}
