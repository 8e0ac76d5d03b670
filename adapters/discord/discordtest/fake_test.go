package discordtest_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
)

const guild, channel, other = "1200000000000000001", "1300000000000000001", "1300000000000000002"

// session returns a discordgo REST client of the fake, with discordgo's
// own 429 retry off, and its host rewritten to the fake's.
func session(t *testing.T, f *discordtest.Server) *discordgo.Session {
	s, err := discordgo.New("Bot " + f.Token)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(f.URL)
	s.Client = &http.Client{Transport: hostRewrite{base}}
	s.ShouldRetryOnRateLimit = false
	s.MaxRestRetries = 0
	return s
}

type hostRewrite struct{ base *url.URL }

func (h hostRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = h.base.Scheme, h.base.Host, h.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

func code(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

func TestMessagesAndLimits(t *testing.T) {
	f := discordtest.New(t)
	f.AddChannel(guild, channel, "incidents")
	f.AddChannel(guild, other, "random")
	s := session(t, f)

	if _, err := s.ChannelMessageSend(other, ""); code(err) != 50006 {
		t.Errorf("empty message: %v, want code 50006", err)
	}
	if _, err := s.ChannelMessageSend(other, strings.Repeat("x", 2001)); code(err) != 50035 {
		t.Errorf("2001 characters: %v, want code 50035", err)
	}
	m, err := s.ChannelMessageSend(channel, "hello")
	if err != nil {
		t.Fatal(err)
	}
	text := "hello, edited"
	for range 3 {
		if _, err := s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: m.ID, Channel: channel, Content: &text}); err != nil {
			t.Fatal(err)
		}
	}
	// Four writes in the channel so far: the sixth within 5 s is refused
	// with a retry_after.
	if _, err := s.ChannelMessageSend(channel, "fifth"); err != nil {
		t.Fatal(err)
	}
	_, err = s.ChannelMessageSend(channel, "one too many")
	var rl *discordgo.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter <= 0 || rl.RetryAfter > 5*time.Second {
		t.Fatalf("sixth write: %v, want a 429 with retry_after", err)
	}
	if got := f.Messages(channel); len(got) != 2 || got[0].Content != text || got[0].EditCount != 3 {
		t.Errorf("messages = %+v", got)
	}

	if _, err := s.MessageThreadStart(channel, m.ID, "incident", 1440); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MessageThreadStart(channel, m.ID, "again", 1440); code(err) != 160004 {
		t.Errorf("second thread on a message: %v, want code 160004", err)
	}
	if th := f.Threads(channel); len(th) != 1 || th[0].ID != m.ID || th[0].OwnerID != f.Bot.ID {
		t.Errorf("threads = %+v, want one with the message's id, owned by the bot", th)
	}

	f.RateLimit(discordtest.RouteStartThread, 1, 700*time.Millisecond, false)
	if _, err := s.ChannelMessageSend("1300000000000000009", "x"); code(err) != 10003 {
		t.Errorf("unknown channel: %v, want code 10003", err)
	}
	if _, err := s.MessageThreadStart(channel, "123", "x", 60); !errors.As(err, &rl) || rl.RetryAfter != 700*time.Millisecond {
		t.Errorf("programmed 429: %v, want retry_after 700ms", err)
	}
}

func TestInteractionsMustBeAnsweredOnceWithin3s(t *testing.T) {
	f := discordtest.New(t, discordtest.WithAckTimeout(200*time.Millisecond))
	f.AddChannel(guild, channel, "incidents")
	s := session(t, f)
	// Interactions reach a bot through the gateway; a bot is connected here
	// only to receive them.
	s.Identify.Intents = discordgo.IntentsGuildMessages
	got := make(chan *discordgo.Interaction, 2)
	s.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { got <- i.Interaction })
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u := discordtest.User{ID: "1400000000000000001", Name: "alice"}

	if _, err := f.Command(channel, u, "status", nil); err != nil {
		t.Fatal(err)
	}
	i := <-got
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}
	if err := s.InteractionRespond(i, resp); err != nil {
		t.Fatal(err)
	}
	if err := s.InteractionRespond(i, resp); code(err) != 40060 {
		t.Errorf("second answer: %v, want code 40060", err)
	}
	text := "done"
	if m, err := s.InteractionResponseEdit(i, &discordgo.WebhookEdit{Content: &text}); err != nil || m.Content != text {
		t.Errorf("edit original: %v, %v", m, err)
	}

	if _, err := f.Command(channel, u, "status", nil); err != nil {
		t.Fatal(err)
	}
	i = <-got
	time.Sleep(300 * time.Millisecond)
	if err := s.InteractionRespond(i, resp); code(err) != 10062 {
		t.Errorf("late answer: %v, want code 10062 (unknown interaction)", err)
	}
}

// A bot renames the threads it started (1 to 100 characters, twice per 10
// minutes) and nothing else; a renamed thread is announced with
// THREAD_UPDATE.
func TestRenameThread(t *testing.T) {
	f := discordtest.New(t)
	f.AddChannel(guild, channel, "incidents")
	s := session(t, f)
	s.Identify.Intents = discordgo.IntentsGuilds
	updated := make(chan *discordgo.Channel, 4)
	s.AddHandler(func(_ *discordgo.Session, u *discordgo.ThreadUpdate) { updated <- u.Channel })
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, err := s.ChannelMessageSend(channel, "restart web")
	if err != nil {
		t.Fatal(err)
	}
	th, err := s.MessageThreadStart(channel, m.ID, "restart web", 1440)
	if err != nil {
		t.Fatal(err)
	}
	f.AddThread(channel, other, "1400000000000000001", "alice's thread")

	rename := func(id, name string) error {
		_, err := s.ChannelEdit(id, &discordgo.ChannelEdit{Name: name})
		return err
	}
	for name, c := range map[string]struct {
		id, name string
		code     int
	}{
		"name too long":         {th.ID, strings.Repeat("x", 101), 50035},
		"blank name":            {th.ID, "   ", 50035},
		"unknown channel":       {"1300000000000000009", "x", 10003},
		"somebody else's":       {other, "x", 50013},
		"a channel, not thread": {channel, "x", 50013},
	} {
		if err := rename(c.id, c.name); code(err) != c.code {
			t.Errorf("%s: %v, want code %d", name, err, c.code)
		}
	}
	f.Fail(discordtest.RouteEditChannel, 1, http.StatusInternalServerError)
	var re *discordgo.RESTError
	if err := rename(th.ID, "Web restarts"); !errors.As(err, &re) || re.Response.StatusCode != 500 {
		t.Errorf("programmed failure: %v, want a 500", err)
	}

	for _, name := range []string{"Web restarts", "Web pods restarting in prod"} {
		if err := rename(th.ID, name); err != nil {
			t.Fatalf("rename to %q: %v", name, err)
		}
		select {
		case c := <-updated:
			if c.ID != th.ID || c.Name != name {
				t.Errorf("THREAD_UPDATE %s %q, want %s %q", c.ID, c.Name, th.ID, name)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no THREAD_UPDATE")
		}
	}
	if c, _ := f.Channel(th.ID); c.Name != "Web pods restarting in prod" {
		t.Errorf("thread name = %q", c.Name)
	}
	var rl *discordgo.RateLimitError
	if err := rename(th.ID, "third"); !errors.As(err, &rl) || rl.RetryAfter < 9*time.Minute {
		t.Errorf("third rename within 10 minutes: %v, want a 429 of minutes", err)
	}
}
