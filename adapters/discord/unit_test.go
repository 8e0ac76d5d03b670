package discord

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

func TestConfigValidation(t *testing.T) {
	ok := Config{Token: "Bot abc", Guilds: []string{"1200000000000000001"}}
	got, err := ok.validate()
	if err != nil || got.Token != "abc" || got.APIURL != DefaultAPIURL {
		t.Errorf("validate(%+v) = %+v, %v; want the token without \"Bot \" and the default api_url", ok, got, err)
	}
	if got, _ := (Config{Token: "x", APIURL: "http://127.0.0.1:9"}).validate(); got.APIURL != "http://127.0.0.1:9/" {
		t.Errorf("api_url = %q, want a trailing /", got.APIURL)
	}
	for name, c := range map[string]Config{
		"no token":        {},
		"bad api_url":     {Token: "x", APIURL: "discord.com"},
		"guild not an id": {Token: "x", Guilds: []string{"ops-team"}},
		"user as number?": {Token: "x", Approvers: []string{"@alice"}},
		"star for users":  {Token: "x", Approvers: []string{"*"}},
	} {
		if _, err := c.validate(); err == nil {
			t.Errorf("%s: validate(%+v) succeeded", name, c)
		}
	}
}

func TestAllowlists(t *testing.T) {
	const g, g2, ch, ch2 = "1", "2", "10", "20"
	cases := []struct {
		name           string
		guilds, chans  []string
		guild, channel string
		want           bool
	}{
		{"nothing configured", nil, nil, g, ch, false},
		{"guild listed", []string{g}, nil, g, ch, true},
		{"other guild", []string{g}, nil, g2, ch, false},
		{"channel listed", []string{g}, []string{ch}, g, ch, true},
		{"channel not listed", []string{g}, []string{ch}, g, ch2, false},
		{"channels only", nil, []string{ch}, g2, ch, true},
		{"every guild", []string{"*"}, nil, g2, ch2, true},
		{"every channel of a guild", []string{g}, []string{"*"}, g, ch2, true},
		{"a DM is not a guild", []string{"*"}, nil, "", ch, false},
	}
	for _, c := range cases {
		cfg := Config{Guilds: c.guilds, Channels: c.chans}
		if got := cfg.allowsPlace(c.guild, c.channel); got != c.want {
			t.Errorf("%s: allowsPlace(%q, %q) = %v, want %v", c.name, c.guild, c.channel, got, c.want)
		}
	}
	cfg := Config{AllowedUsers: []string{"7"}}
	if !cfg.allowsDM("7") || cfg.allowsDM("8") || (Config{}).allowsDM("7") {
		t.Error("allowsDM: want only the listed users")
	}
	if cmp.Diff((Config{Guilds: []string{"1", "2"}}).commandGuilds(), []string{"1", "2"}) != "" ||
		(Config{Guilds: []string{"*"}}).commandGuilds() != nil || (Config{}).commandGuilds() != nil {
		t.Error("commandGuilds: want the listed guilds, else global")
	}
}

func TestConvKeys(t *testing.T) {
	for _, c := range []struct{ guild, channel, key string }{
		{"12", "34", "discord:12:34"},
		{"", "34", "discord:@me:34"},
	} {
		if got := ConvKey(c.guild, c.channel); got != c.key {
			t.Errorf("ConvKey(%q, %q) = %q", c.guild, c.channel, got)
		}
		g, ch, err := parseKey(c.key)
		if err != nil || g != c.guild || ch != c.channel {
			t.Errorf("parseKey(%q) = %q, %q, %v", c.key, g, ch, err)
		}
	}
	for _, bad := range []string{"telegram:1:2", "discord:12", "discord:12:ab", "discord:x:34"} {
		if _, _, err := parseKey(bad); err == nil {
			t.Errorf("parseKey(%q) succeeded", bad)
		}
	}
}

func TestThreadName(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for in, want := range map[string]string{
		"why are the web pods restarting?":        "why are the web pods restarting?",
		"\n\n  **prod   is down**  \nsecond line": "prod is down",
		"":    "opsgate request",
		"```": "opsgate request",
		long:  strings.TrimSpace(long[:99]) + "…",
	} {
		got := threadName(in)
		if got != want {
			t.Errorf("threadName(%q) = %q, want %q", in, got, want)
		}
		if n := len([]rune(got)); n > 100 || n < 1 {
			t.Errorf("threadName(%q) has %d characters", in, n)
		}
	}
	if got := stripMentions("<@42> restart <@!42> web", "42"); got != "restart   web" {
		t.Errorf("stripMentions = %q", got)
	}
	for s, want := range map[string]bool{"stop": true, " STOP! ": true, "/stop": true, "stop the deploy": false, "don't stop": false} {
		if isStopWord(s) != want {
			t.Errorf("isStopWord(%q) = %v", s, !want)
		}
	}
}

func TestOwns(t *testing.T) {
	a, err := New(Config{Token: "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !a.Owns("discord:1:2") || a.Owns("telegram:1:2") {
		t.Error("Owns: want the discord: keys only")
	}
}

func TestContentAndComponents(t *testing.T) {
	if got := content(render.Message{Text: "  "}); got != "…" {
		t.Errorf("empty content = %q", got)
	}
	long := strings.Repeat("é", 2500)
	if got := content(render.Message{Text: long}); render.Len(got) > maxContent {
		t.Errorf("content of %d characters", render.Len(got))
	}
	if got := content(render.Message{Text: "**a** `b`", Plain: true}); got != "\\*\\*a\\*\\* \\`b\\`" {
		t.Errorf("plain content = %q, want the markup escaped", got)
	}
	if got := components(nil); got == nil || len(got) != 0 {
		t.Errorf("components(nil) = %#v, want an empty, non-nil slice (it removes buttons on edit)", got)
	}
	row := components([]render.Button{
		{Label: "Approve", Data: "a:1", Style: render.StylePrimary},
		{Label: "Deny", Data: "d:1", Style: render.StyleDanger},
		{Label: strings.Repeat("x", 100), Data: "s:1"},
	})[0].(discordgo.ActionsRow)
	var styles []discordgo.ButtonStyle
	for _, c := range row.Components {
		b := c.(discordgo.Button)
		styles = append(styles, b.Style)
		if len([]rune(b.Label)) > maxButtonLabel {
			t.Errorf("label of %d characters", len([]rune(b.Label)))
		}
	}
	if want := []discordgo.ButtonStyle{discordgo.SuccessButton, discordgo.DangerButton, discordgo.SecondaryButton}; cmp.Diff(styles, want) != "" {
		t.Errorf("styles = %v, want %v", styles, want)
	}
}

func TestClassify(t *testing.T) {
	rl := &discordgo.RateLimitError{RateLimit: &discordgo.RateLimit{
		TooManyRequests: &discordgo.TooManyRequests{RetryAfter: 1500 * time.Millisecond}, URL: "u"}}
	var e *render.Error
	if err := classify("edit message", rl); !errors.As(err, &e) || e.Kind != render.KindRateLimited || e.RetryAfter != 1500*time.Millisecond {
		t.Errorf("classify(429) = %v, want rate limited for 1.5 s", err)
	}
	notFound := &discordgo.RESTError{Response: &http.Response{StatusCode: 404, Status: "404 Not Found"},
		Message: &discordgo.APIErrorMessage{Code: 10008, Message: "Unknown Message"}}
	if err := classify("edit message", notFound); !errors.As(err, &e) || e.Kind != render.KindRejected {
		t.Errorf("classify(404) = %v, want rejected", err)
	}
	if err := classify("post message", context.DeadlineExceeded); errors.As(err, &e) {
		t.Errorf("classify(timeout) = %v, want ambiguous (unclassified)", err)
	} else if !strings.HasPrefix(err.Error(), "discord: post message: ") {
		t.Errorf("error %q lacks the package and operation", err)
	}
}

func TestWindowSpacesWrites(t *testing.T) {
	w := newWindow(5, time.Second)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	var got []time.Duration
	for range 7 {
		got = append(got, w.reserve("c").Sub(now))
	}
	want := []time.Duration{0, 0, 0, 0, 0, time.Second, time.Second}
	if cmp.Diff(got, want) != "" {
		t.Errorf("slots = %v, want %v", got, want)
	}
	if d := w.reserve("other").Sub(now); d != 0 {
		t.Errorf("another channel waits %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.now = time.Now
	w2 := newWindow(1, time.Hour)
	w2.wait(context.Background(), "c")
	var e *render.Error
	if err := w2.wait(ctx, "c"); !errors.As(err, &e) || e.Kind != render.KindRateLimited {
		t.Errorf("wait with an ended context = %v, want rate limited (nothing was sent)", err)
	}
}

func TestCommandArgsAndStatus(t *testing.T) {
	d := discordgo.ApplicationCommandInteractionData{Name: "opsgate", Options: []*discordgo.ApplicationCommandInteractionDataOption{{
		Name: "request", Type: discordgo.ApplicationCommandOptionSubCommand,
		Options: []*discordgo.ApplicationCommandInteractionDataOption{{Name: "text", Type: discordgo.ApplicationCommandOptionString, Value: " restart web "}},
	}}}
	if sub, text := commandArgs(d); sub != "request" || text != "restart web" {
		t.Errorf("commandArgs = %q, %q", sub, text)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := core.Status{
		ActiveRun: &core.Run{ID: "0123456789abcdef", Status: core.RunRunning, StartedAt: now.Add(-90 * time.Second), Iterations: 2},
		Queued:    1,
		PendingApprovals: []core.Approval{{Tool: "scale_deployment", Requester: core.Actor{ID: "1", Name: "@alice"},
			ExpiresAt: now.Add(30 * time.Minute)}},
	}
	want := "▶️ Run `01234567` is running, started 1m30s ago, 2 model calls.\n📨 1 message(s) waiting.\n" +
		"🔐 Waiting for approval:\n• `scale_deployment` requested by @alice, expires 03:34 UTC"
	if got := statusText(st, now); got != want {
		t.Errorf("statusText:\n got %q\nwant %q", got, want)
	}
	if got := statusText(core.Status{}, now); !strings.Contains(got, "Nothing is running") {
		t.Errorf("idle status = %q", got)
	}
}

func TestAPIURLRebasesRequests(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RequestURI()
	}))
	defer srv.Close()
	c := newHTTPClient(srv.URL+"/proxy/", nil)
	resp, err := c.Get(discordgo.EndpointUser("@me") + "?with=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "/proxy/api/v9/users/@me?with=1" {
		t.Errorf("request reached %q, want it under the api_url base", got)
	}
	if newHTTPClient(DefaultAPIURL, nil).Transport != http.DefaultTransport {
		t.Error("the default api_url should not rewrite anything")
	}
}

// A thread already started from a message (the message came again after a
// reconnect) is the thread to use, not an error.
func TestStartThreadAgainFindsTheThread(t *testing.T) {
	f := discordtest.New(t)
	f.AddChannel("1", "10", "incidents")
	a, err := New(Config{Token: f.Token, APIURL: f.URL, Guilds: []string{"1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	m, err := a.dg.ChannelMessageSend("10", "restart web")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		id, err := a.startThread(ctx, "10", m.ID, "restart web", "restart web")
		if err != nil || id != m.ID {
			t.Errorf("startThread = %q, %v; want the thread %s", id, err, m.ID)
		}
	}
	calls := f.CallsTo(discordtest.RouteStartThread)
	if len(calls) != 2 || calls[1].Status != http.StatusBadRequest {
		t.Errorf("thread calls = %+v, want the second refused", calls)
	}
	if p, ok := a.places.get(m.ID); !ok || !p.thread || p.parent != "10" {
		t.Errorf("place of the thread = %+v, %v", p, ok)
	}
}

// A thread is renamed after a title unless it has that name already, or
// the title is the start title of the conversation it was started for:
// its request, or a schedule's prompt in the message it hangs from, cut
// short. That holds once; later titles are the model's.
func TestTitleRenameDecision(t *testing.T) {
	const long = "the payments-api pods in prod restart every few minutes since the 14:00 deploy, please check"
	const root = "⏰ Scheduled run of morning-health (2026-11-26 09:00:00 UTC): Summarise cluster health; flag anything unusual."
	cases := []struct {
		name                 string
		started              bool
		threadName, origin   string
		title, current       string
		want, wantAfterwards bool
	}{
		{"start title of a short request", true, "restart web", "restart web", "restart web", "", false, false},
		{"start title of a long request", true, threadName(long), long, "the payments-api pods in prod restart every few minutes sin…", "", false, true},
		{"start title of a schedule's prompt", true, "morning-health", root, "Summarise cluster health; flag anything unusual.", "", false, true},
		{"the model's title", true, "restart web", "restart web", "Web pods restarting in prod", "", true, true},
		{"named so in the gateway state", false, "", "", "Web pods restarting in prod", "Web pods restarting in prod", false, false},
		{"a thread looked up", false, "", "", "Web pods restarting in prod", "", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := newThreadNames()
			if c.started {
				n.started("7", c.threadName, c.origin)
			}
			name := threadName(c.title)
			if got := n.wants("7", c.title, name, c.current); got != c.want {
				t.Errorf("first title %q: wants = %v, want %v", c.title, got, c.want)
			}
			if got := n.wants("7", c.title, name, c.current); got != c.wantAfterwards {
				t.Errorf("same title again: wants = %v, want %v", got, c.wantAfterwards)
			}
		})
	}
}

// A click whose payload names nobody (no member, no user) decides
// nothing: the engine is never asked to decide as "" (found by FuzzClick).
func TestClickWithoutClickerDecidesNothing(t *testing.T) {
	a, eng := clickRig(t)
	var ic discordgo.InteractionCreate
	payload := `{"id":"1","type":3,"token":"t","guild_id":"` + fuzzGuild + `","channel_id":"` + fuzzChannel +
		`","data":{"custom_id":"a:0123456789abcdef0123456789abcdef","component_type":2},"message":{"id":"2"}}`
	if err := json.Unmarshal([]byte(payload), &ic); err != nil {
		t.Fatal(err)
	}
	a.handleClick(context.Background(), ic.Interaction)
	if len(eng.decisions) != 0 {
		t.Errorf("decisions %+v from a click by nobody", eng.decisions)
	}
}
