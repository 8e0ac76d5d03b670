package discord_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// withTitles turns on the engine's titles after three exchanges.
func withTitles(c *core.Config) { c.Titles = true }

// modelTitle is what the scripted model calls the conversations here.
const modelTitle = "Payments API restarts in prod"

// titling answers the title request of the engine with modelTitle and
// every other request with "Answer N."
func titling(s *stack) {
	n := 0
	s.llm.SetResponder(func(r llmfake.Request) llmfake.Reply {
		if len(r.Messages) > 0 && strings.Contains(r.Messages[0].Content, "Write a title") {
			return llmfake.Reply{Text: modelTitle}
		}
		n++
		return llmfake.Reply{Text: "Answer " + itoa(n) + "."}
	})
}

// renames returns the names the adapter gave channel, in order.
func renames(s *stack, ch string) []string {
	var names []string
	for _, c := range s.fake.CallsTo(discordtest.RouteEditChannel) {
		var body struct {
			Name string `json:"name"`
		}
		if c.Channel == ch && c.Decode(&body) == nil {
			names = append(names, body.Name)
		}
	}
	return names
}

// waitName waits until the fake shows channel ch named name.
func waitName(s *stack, ch, name string) {
	s.t.Helper()
	if !s.fake.Wait(20*time.Second, func() bool { c, _ := s.fake.Channel(ch); return c.Name == name }) {
		c, _ := s.fake.Channel(ch)
		s.t.Fatalf("channel %s is named %q, want %q; calls:\n%s", ch, c.Name, name, dumpCalls(s.fake.Calls()))
	}
}

// title sends a conversation.title.generated event to the adapter, as the
// engine does.
func title(s *stack, key, text string) {
	s.t.Helper()
	if err := s.ad.Send(context.Background(), core.Event{Type: core.EventConversationTitle, ConvKey: key, Text: text, Time: time.Now()}); err != nil {
		s.t.Fatalf("Send: %v", err)
	}
}

// A mention opens a thread named after the request; the conversation's
// start title (the same text) leaves it alone, and the title the model
// writes after three exchanges renames it, once.
func TestGeneratedTitleRenamesThread(t *testing.T) {
	t.Parallel()
	s := newStack(t, withTitles)
	titling(s)
	request := "payments-api keeps restarting, can you check?"
	m := s.say(channel, alice, s.fake.Mention()+" "+request)
	th := s.thread(channel, m.ID)
	if th.Name != request {
		t.Fatalf("thread name = %q, want the request", th.Name)
	}
	s.waitFinal(th.ID, "Answer 1.")
	s.say(th.ID, alice, "and in staging?")
	s.waitFinal(th.ID, "Answer 2.")
	s.say(th.ID, alice, "what changed yesterday?")
	s.waitFinal(th.ID, "Answer 3.")

	waitName(s, th.ID, modelTitle)
	s.atEnd = append(s.atEnd, func() {
		if got := renames(s, th.ID); len(got) != 1 || got[0] != modelTitle {
			t.Errorf("renames of the thread = %q, want one, to %q", got, modelTitle)
		}
	})
	// The same title again (another process, a resumed run) is no call.
	title(s, discord.ConvKey(guild, th.ID), modelTitle)
}

// A request longer than a title names the thread in full; the start title,
// the request cut to 60 characters, does not shorten it.
func TestStartTitleKeepsLongRequestName(t *testing.T) {
	t.Parallel()
	s := newStack(t, withTitles)
	titling(s)
	request := "the payments-api pods in prod restart every few minutes since the 14:00 deploy, please check"
	m := s.say(channel, alice, s.fake.Mention()+" "+request)
	th := s.thread(channel, m.ID)
	s.waitFinal(th.ID, "Answer 1.")
	// Renames of a thread go in order: once this one is done, the start
	// title has been dealt with.
	title(s, discord.ConvKey(guild, th.ID), modelTitle)
	waitName(s, th.ID, modelTitle)
	if got := renames(s, th.ID); len(got) != 1 {
		t.Errorf("renames of the thread = %q, want only the model's title", got)
	}
}

// A title never renames a thread somebody else started (even one the bot
// talks in), a channel, or a DM.
func TestTitleRenamesOnlyTheBotsThreads(t *testing.T) {
	t.Parallel()
	s := newStack(t, withTitles)
	titling(s)
	theirs := "1300000000000000077"
	s.fake.AddThread(channel, theirs, alice.ID, "alice's notes")
	s.say(theirs, alice, s.fake.Mention()+" look at the payments pods")
	s.waitFinal(theirs, "Answer 1.") // its start title went by
	title(s, discord.ConvKey(guild, theirs), modelTitle)
	title(s, discord.ConvKey(guild, channel), modelTitle)
	title(s, discord.ConvKey("", dmAlice), modelTitle)

	s.atEnd = append(s.atEnd, func() {
		if calls := s.fake.CallsTo(discordtest.RouteEditChannel); len(calls) != 0 {
			t.Errorf("channels renamed:\n%s", dumpCalls(calls))
		}
		for _, ch := range []string{theirs, channel} {
			if c, _ := s.fake.Channel(ch); c.Name == modelTitle {
				t.Errorf("channel %s renamed", ch)
			}
		}
	})
}

// A rename Discord refuses (the thread is gone: 404) or fails (500) is
// logged; the conversation goes on, and a later title renames the thread.
func TestFailedRenameIsLogged(t *testing.T) {
	t.Parallel()
	s := newStack(t, withTitles)
	titling(s)
	m := s.say(channel, alice, s.fake.Mention()+" payments-api keeps restarting")
	th := s.thread(channel, m.ID)
	s.waitFinal(th.ID, "Answer 1.")
	key := discord.ConvKey(guild, th.ID)

	for i, status := range []int{http.StatusNotFound, http.StatusInternalServerError} {
		s.fake.Fail(discordtest.RouteEditChannel, 1, status)
		title(s, key, modelTitle)
		logged := func() bool {
			for line := range strings.Lines(s.logs.String()) {
				if strings.Contains(line, "rename a thread") && strings.Contains(line, "HTTP "+itoa(status)) {
					return true
				}
			}
			return false
		}
		if !s.fake.Wait(20*time.Second, logged) {
			t.Fatalf("no log of the rename failing with %d:\n%s", status, s.logs.String())
		}
		if c, _ := s.fake.Channel(th.ID); c.Name == modelTitle {
			t.Fatalf("thread renamed despite the %d", status)
		}
		s.say(th.ID, alice, "still there?")
		s.waitFinal(th.ID, "Answer "+itoa(i+2)+".")
	}
	title(s, key, modelTitle)
	waitName(s, th.ID, modelTitle)
}
