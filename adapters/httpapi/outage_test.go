package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/postgres"
	"github.com/opsgate/opsgate/policy/redact"
)

// pgReplicas are two replicas of opsgate in one process, each with its
// own engine, API and connection pool, on one real PostgreSQL server of
// their own (the test stops and restarts it).
type pgReplicas struct {
	cluster *pgtest.Cluster
	llm     *llmfake.Server
	eng     [2]*core.Engine
	rec     [2]*coretest.Recorder
	srv     [2]*httptest.Server
	token   string
	store   [2]*postgres.Store
}

func newPGReplicas(t *testing.T, cfg func(*core.Config)) *pgReplicas {
	t.Helper()
	cluster, err := pgtest.Start()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required: %v", err)
		}
		t.Skipf("no PostgreSQL (%v)", err)
	}
	t.Cleanup(cluster.Close)
	stack := enginetest.New(t)
	red, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &pgReplicas{cluster: cluster, llm: stack.LLM}
	for i := range 2 {
		store, err := postgres.Open(t.Context(), cluster.URL("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		p.store[i] = store
		p.rec[i] = coretest.NewRecorder()
		d := stack.Deps(t, p.rec[i])
		d.Store = store
		d.Display = red.Events()
		c := enginetest.Config()
		if cfg != nil {
			cfg(&c)
		}
		p.eng[i] = enginetest.Engine(t, c, d)
		eng := p.eng[i]
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			eng.Shutdown(ctx)
		})
		api := httpapi.New(httpapi.Options{Store: store, Tokens: store, Engine: eng, Redact: red.String,
			Logger: coretest.Logger(t), TailEvery: 50 * time.Millisecond})
		mux := http.NewServeMux()
		mux.Handle(httpapi.Prefix, api)
		p.srv[i] = httptest.NewServer(mux)
		t.Cleanup(p.srv[i].Close)
		t.Cleanup(api.Close)
		if i == 0 {
			secret, tok, err := httpapi.NewToken("bob", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			// An admin token: these streams follow carol's conversation
			// from before it starts, which only admins may (docs/design.md §17).
			tok.Scopes = []string{httpapi.ScopeAdmin}
			if err := store.CreateToken(t.Context(), tok); err != nil {
				t.Fatal(err)
			}
			p.token = secret
		}
	}
	return p
}

// open opens a stream of replica i, as rig.open does.
func (p *pgReplicas) open(t *testing.T, i int, path, lastEventID string) *sseStream {
	r := &rig{t: t, srv: p.srv[i]}
	return r.open(p.token, "GET", path, lastEventID, "")
}

// gapFrame is an `event: gap` frame: the ids a stream cannot have.
type gapFrame struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// readWhole reads a stream to the completed event of run, keeping the
// gap frames apart.
func readWhole(t *testing.T, s *sseStream, run string) (evs []sseEvent, gaps []gapFrame) {
	t.Helper()
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("reading the stream after %d events: %v", len(evs), err)
		}
		switch {
		case ev.Comment != "":
			continue
		case ev.Name == "gap":
			var g gapFrame
			if err := json.Unmarshal([]byte(strings.TrimPrefix(dataLine(ev.Raw), "data: ")), &g); err != nil || g.From > g.To || ev.ID != g.To {
				t.Fatalf("gap frame %q: %+v %v", ev.Raw, g, err)
			}
			gaps = append(gaps, g)
			evs = append(evs, ev)
			continue
		}
		if ev.Name != string(ev.Data.Type) || ev.ID != ev.Data.Seq {
			t.Fatalf("frame %q: the event line or id disagree with the data", ev.Raw)
		}
		evs = append(evs, ev)
		if ev.Name == string(core.EventCompleted) && ev.Data.RunID == run {
			return evs, gaps
		}
	}
}

// checkWhole checks that a stream got every event of want (what an engine
// subscriber received after the stream's start) in order, or first a gap
// frame naming it: no event is missing without a gap saying so.
func checkWhole(t *testing.T, name string, want []core.Event, got []sseEvent) {
	t.Helper()
	var covered []gapFrame
	i := 0
	for _, ev := range got {
		if ev.Name == "gap" {
			var g gapFrame
			_ = json.Unmarshal([]byte(strings.TrimPrefix(dataLine(ev.Raw), "data: ")), &g)
			covered = append(covered, g)
			continue
		}
		for i < len(want) && want[i].Seq < ev.ID {
			if !inGaps(covered, want[i].Seq) {
				t.Fatalf("%s: event %d (%s) is missing and no gap named it before event %d", name, want[i].Seq, want[i].Type, ev.ID)
			}
			i++
		}
		if i >= len(want) || want[i].Seq != ev.ID || string(want[i].Type) != ev.Name || want[i].Text != ev.Data.Text {
			t.Fatalf("%s: got event %d %s %q, want %s", name, ev.ID, ev.Name, ev.Data.Text, stampOf(want, i))
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%s: the stream ended before event %s", name, stampOf(want, i))
	}
}

func inGaps(gaps []gapFrame, seq int64) bool {
	for _, g := range gaps {
		if g.From <= seq && seq <= g.To {
			return true
		}
	}
	return false
}

func stampOf(evs []core.Event, i int) string {
	if i >= len(evs) {
		return "(none)"
	}
	return fmt.Sprintf("%d %s %q", evs[i].Seq, evs[i].Type, evs[i].Text)
}

// after returns the events of evs above seq.
func after(evs []core.Event, seq int64) []core.Event {
	var out []core.Event
	for _, ev := range evs {
		if ev.Seq > seq {
			out = append(out, ev)
		}
	}
	return out
}

// outageRun streams a long answer on replica 0 while PostgreSQL is down for
// 10 s, with a live stream on each replica (replica 1 follows through the
// store); it returns, once the run completed, the three streams' events
// (live on 0, live on 1, and a stream reconnecting to replica 1 after the
// run with the Last-Event-ID read before the outage) and what replica 0's
// engine subscriber received.
func outageRun(t *testing.T, p *pgReplicas) (want []core.Event, cut int64, live0, live1, again []sseEvent) {
	t.Helper()
	const key = "api:outage"
	w := make([]string, 240)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", i+1)
	}
	p.llm.Push(llmfake.Reply{Text: strings.Join(w, " "), TokenDelay: 60 * time.Millisecond})
	path := "/api/v1/conversations/" + key + "/events"
	// Only a conversation that exists can be followed (docs/design.md §16).
	if _, err := p.store[0].Conversation(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	s0, s1 := p.open(t, 0, path, ""), p.open(t, 1, path, "")
	if err := p.eng[0].Handle(t.Context(), core.Inbound{ConvKey: key, MessageID: "m1", User: carol, Text: "stream a long answer", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	p.rec[0].Wait(t, 20*time.Second, 20, coretest.Of(core.EventToken))
	evs := p.rec[0].Events()
	cut = evs[len(evs)-1].Seq // what a client had read when the store went away
	if err := p.cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Second)
	if err := p.cluster.Restart(); err != nil {
		t.Fatal(err)
	}
	done := p.rec[0].Wait(t, 60*time.Second, 1, coretest.Of(core.EventCompleted))
	want = p.rec[0].RunEvents(done.RunID)
	if n := len(after(want, cut)); n < 100 {
		t.Fatalf("only %d events after the store went away; the test proves nothing", n)
	}
	live0, _ = readWhole(t, s0, done.RunID)
	live1, _ = readWhole(t, s1, done.RunID)
	again, _ = readWhole(t, p.open(t, 1, path, strconv.FormatInt(cut, 10)), done.RunID)
	return want, cut, live0, live1, again
}

// Issue 20, acceptance 7: PostgreSQL is down for 10 s in the middle of a
// streamed answer. The events emitted meanwhile are kept in memory and
// written when it is back, and their numbers are never handed out again:
// a live stream on the replica that runs the conversation, a live stream
// on another replica (which reads the store) and a stream reconnecting
// afterwards with the Last-Event-ID it had before the outage each get
// every event the run emitted, as the engine's subscriber received them.
func TestSSEStreamsMissNothingAcrossAStoreOutage(t *testing.T) {
	p := newPGReplicas(t, nil)
	want, cut, live0, live1, again := outageRun(t, p)
	for _, s := range []struct {
		name string
		got  []sseEvent
		want []core.Event
	}{
		{"live stream on the replica running the conversation", live0, want},
		{"live stream on the other replica", live1, want},
		{"stream reconnecting with Last-Event-ID " + strconv.FormatInt(cut, 10), again, after(want, cut)},
	} {
		for _, ev := range s.got {
			if ev.Name == "gap" {
				t.Errorf("%s: a gap %q, though nothing was dropped", s.name, ev.Raw)
			}
		}
		checkWhole(t, s.name, s.want, s.got)
	}
}

// Issue 20, acceptance 7 (bounded): the same outage with room for only 8
// waiting events. The replica running the conversation still streams
// every event live; a stream reading the store (live on the other replica,
// or reconnecting afterwards) gets an `event: gap` naming what it cannot
// have before the events that follow it, never a silent hole.
func TestSSEStreamsAnnounceWhatAFullOutageBufferDropped(t *testing.T) {
	p := newPGReplicas(t, func(c *core.Config) { c.EventBuffer = 8 })
	want, cut, live0, live1, again := outageRun(t, p)
	for _, ev := range live0 {
		if ev.Name == "gap" {
			t.Errorf("the live stream of the replica running the conversation got a gap %q: it emitted every event itself", ev.Raw)
		}
	}
	checkWhole(t, "live stream on the replica running the conversation", want, live0)
	for _, s := range []struct {
		name string
		got  []sseEvent
		want []core.Event
	}{
		{"live stream on the other replica", live1, want},
		{"stream reconnecting with Last-Event-ID " + strconv.FormatInt(cut, 10), again, after(want, cut)},
	} {
		gaps := 0
		for _, ev := range s.got {
			if ev.Name == "gap" {
				gaps++
			}
		}
		if gaps == 0 {
			t.Errorf("%s: no gap, though the buffer dropped events", s.name)
		}
		checkWhole(t, s.name, s.want, s.got)
	}
}

// A gap kept by the event log is shown to a replaying client as
// `event: gap` in its place, naming only the ids after the client's
// Last-Event-ID; a client that has read past it never sees it.
func TestSSEGapNamesOnlyWhatTheClientLacks(t *testing.T) {
	r := newRig(t)
	const key = "api:gappy"
	at := time.Now()
	ev := func(seq int64, typ core.EventType, text string) core.Event {
		return core.Event{Type: typ, ConvKey: key, RunID: "run-1", Seq: seq, Time: at, Text: text}
	}
	gap := core.Event{Type: core.EventGap, ConvKey: key, RunID: "run-1", Seq: 9, Time: at, Gap: &core.Gap{From: 5, To: 9}}
	if _, err := r.stack.Store.Conversation(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if err := r.stack.Store.AppendEvents(t.Context(), []core.Event{
		ev(1, core.EventReady, ""), ev(2, core.EventToken, "a"), ev(3, core.EventToken, "b"), gap, ev(12, core.EventToken, "c"),
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		last string
		want []string
	}{
		{"2", []string{"3 token", "9 gap 5-9", "12 token"}},
		{"6", []string{"9 gap 7-9", "12 token"}},
		{"9", []string{"12 token"}},
	} {
		s := r.open(r.tokens["bob"], "GET", "/api/v1/conversations/"+key+"/events", tc.last, "")
		var got []string
		for len(got) < len(tc.want) {
			f, err := s.Next()
			if err != nil {
				t.Fatalf("Last-Event-ID %s: %v after %q", tc.last, err, got)
			}
			switch {
			case f.Comment != "":
			case f.Name == "gap":
				var g gapFrame
				if err := json.Unmarshal([]byte(strings.TrimPrefix(dataLine(f.Raw), "data: ")), &g); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d gap %d-%d", f.ID, g.From, g.To))
			default:
				got = append(got, fmt.Sprintf("%d %s", f.ID, f.Name))
			}
		}
		s.Close()
		if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
			t.Errorf("Last-Event-ID %s: got %q, want %q", tc.last, got, tc.want)
		}
	}
}
