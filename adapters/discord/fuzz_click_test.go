package discord

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/core"
)

// clickEngine records what a click asks of the engine. Decisions find no
// approval; run-1 is running everywhere.
type clickEngine struct {
	mu        sync.Mutex
	decisions []core.Decision
	stops     []string
}

func (e *clickEngine) Handle(context.Context, core.Inbound) error { return nil }

func (e *clickEngine) Stop(_ context.Context, key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stops = append(e.stops, key)
	return true
}

func (e *clickEngine) Decide(_ context.Context, d core.Decision) (core.Approval, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.decisions = append(e.decisions, d)
	return core.Approval{}, core.ErrNotFound
}

func (e *clickEngine) Status(context.Context, string) (core.Status, error) {
	return core.Status{Busy: true, ActiveRun: &core.Run{ID: "run-1"}}, nil
}

const (
	fuzzGuild   = "1200000000000000001"
	fuzzChannel = "1300000000000000001"
)

// quietTB keeps the fake's log of unknown routes (the fuzzer's clicks
// make up webhooks) out of the fuzz target, which may not log through f.
type quietTB struct{ testing.TB }

func (quietTB) Logf(string, ...any) {}

// clickRig is an adapter over the Discord fake with one guild channel,
// and the engine it records clicks in.
func clickRig(tb testing.TB) (*Adapter, *clickEngine) {
	fake := discordtest.New(quietTB{tb})
	fake.AddChannel(fuzzGuild, fuzzChannel, "ops")
	// Clicks made up by a test are unknown to the fake: this front
	// acknowledges any interaction and passes everything else to it.
	front := http.NewServeMux()
	front.HandleFunc("POST /api/v9/interactions/{id}/{token}/callback", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	target, _ := url.Parse(fake.URL)
	front.Handle("/", httputil.NewSingleHostReverseProxy(target))
	srv := httptest.NewServer(front)
	tb.Cleanup(srv.Close)

	eng := &clickEngine{}
	a, err := New(Config{Token: fake.Token, APIURL: srv.URL, Guilds: []string{fuzzGuild}}, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	// Clicks are dispatched by hand, without Run's gateway: the engine is
	// the one Run would have been given.
	a.engine = eng
	tb.Cleanup(func() { a.Close() })
	return a, eng
}

// FuzzClick hands arbitrary INTERACTION_CREATE payloads of button clicks
// to the adapter, as the gateway would. A click is never trusted beyond
// its payload: the adapter decides at most one approval per click, only
// for a custom_id "a:<id>" (approve) or "d:<id>" (deny) with exactly that
// id, as the member or user who clicked; and it stops a run only for a
// custom_id "s:<run id prefix>" of the running run, in the channel the
// click came from.
func FuzzClick(f *testing.F) {
	a, eng := clickRig(f)
	click := func(customID, who string) string {
		return `{"id":"1500000000000000001","application_id":"1100000000000000002","type":3,"token":"itok-1","version":1,` +
			`"guild_id":"` + fuzzGuild + `","channel_id":"` + fuzzChannel + `",` +
			`"member":{"user":{"id":"` + who + `","username":"bob"},"roles":[],"permissions":"0"},` +
			`"message":{"id":"1500000000000000000","channel_id":"` + fuzzChannel + `","content":"card"},` +
			`"data":{"custom_id":"` + customID + `","component_type":2}}`
	}
	for _, s := range []string{
		click("a:0123456789abcdef0123456789abcdef", "1400000000000000002"),
		click("d:x:y", "1400000000000000003"),
		click("s:run", "1400000000000000002"),
		click("s:run-2", "1400000000000000002"),
		`{"id":"1","type":3,"token":"t","channel_id":"` + fuzzChannel + `","user":{"id":"14"},"message":{"id":"2"},"data":{"custom_id":"a:dm","component_type":2}}`,
		`{"id":"1","type":3,"token":"t","guild_id":"` + fuzzGuild + `","channel_id":"` + fuzzChannel + `","data":{"custom_id":"a:nobody","component_type":2},"message":{"id":"2"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		var ic discordgo.InteractionCreate
		if err := json.Unmarshal([]byte(payload), &ic); err != nil || ic.Interaction == nil ||
			ic.Type != discordgo.InteractionMessageComponent {
			return // the gateway dispatches only what decodes; onInteraction sends only clicks here
		}
		eng.mu.Lock()
		eng.decisions, eng.stops = nil, nil
		eng.mu.Unlock()
		a.handleClick(context.Background(), ic.Interaction)

		eng.mu.Lock()
		defer eng.mu.Unlock()
		data := ic.MessageComponentData()
		action, id, _ := strings.Cut(data.CustomID, ":")
		who := ic.User
		if ic.Member != nil && ic.Member.User != nil {
			who = ic.Member.User
		}
		if len(eng.decisions)+len(eng.stops) > 1 {
			t.Fatalf("one click made decisions %+v and stops %q", eng.decisions, eng.stops)
		}
		for _, d := range eng.decisions {
			if d.ApprovalID != id || id == "" || (action == "a") != d.Approve || action != "a" && action != "d" {
				t.Fatalf("decision %+v from custom_id %q", d, data.CustomID)
			}
			if who == nil || d.Actor.ID != who.ID {
				t.Fatalf("decided as %q, clicked by %+v", d.Actor.ID, who)
			}
		}
		for _, key := range eng.stops {
			if action != "s" || id == "" || !strings.HasPrefix("run-1", id) || key != ConvKey(ic.GuildID, ic.ChannelID) {
				t.Fatalf("stopped %s from custom_id %q in %s/%s", key, data.CustomID, ic.GuildID, ic.ChannelID)
			}
		}
	})
}
