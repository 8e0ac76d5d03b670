package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// sseEvent is one event of a stream as a client reads it; a block of
// comment lines only (a heartbeat) has none of the fields but Comment.
type sseEvent struct {
	ID      int64
	Name    string
	Data    core.Event
	Raw     string
	Comment string
}

// sseStream is an open stream; Close ends it as a client going away would.
type sseStream struct {
	resp   *http.Response
	lines  *bufio.Scanner
	cancel context.CancelFunc
	// Comments are the comment lines read so far (heartbeats).
	Comments []string
}

// open sends a request for a stream and checks it is one; hdr are more
// header names and values, in pairs.
func (r *rig) open(token, method, path, lastEventID string, body string, hdr ...string) *sseStream {
	r.t.Helper()
	ctx, cancel := context.WithCancel(r.t.Context())
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.srv.URL+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		r.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		r.t.Fatalf("%s %s = %d %s %s, want an event stream", method, path, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	s := &sseStream{resp: resp, lines: bufio.NewScanner(resp.Body), cancel: cancel}
	s.lines.Buffer(make([]byte, 0, 64<<10), 4<<20)
	r.t.Cleanup(s.Close)
	return s
}

// Close ends the stream from the client's side.
func (s *sseStream) Close() {
	s.cancel()
	s.resp.Body.Close()
}

// Next reads the next event; io.EOF when the server ended the stream.
func (s *sseStream) Next() (sseEvent, error) {
	var ev sseEvent
	var raw strings.Builder
	fields := 0
	for s.lines.Scan() {
		line := s.lines.Text()
		raw.WriteString(line + "\n")
		switch {
		case line == "":
			ev.Raw = raw.String()
			return ev, nil
		case strings.HasPrefix(line, ":"):
			ev.Comment = strings.TrimSpace(line[1:])
			s.Comments = append(s.Comments, ev.Comment)
		case strings.HasPrefix(line, "id: "):
			n, err := strconv.ParseInt(line[4:], 10, 64)
			if err != nil {
				return ev, fmt.Errorf("id line %q: %w", line, err)
			}
			ev.ID = n
			fields++
		case strings.HasPrefix(line, "event: "):
			ev.Name = line[7:]
			fields++
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &ev.Data); err != nil {
				return ev, fmt.Errorf("data line %q: %w", line, err)
			}
			fields++
		default:
			return ev, fmt.Errorf("not an SSE line: %q", line)
		}
	}
	if err := s.lines.Err(); err != nil {
		return ev, err
	}
	return ev, io.EOF
}

// readUntil reads events until stop says so (inclusive) or the stream ends.
func (s *sseStream) readUntil(t *testing.T, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("reading the stream after %d events: %v", len(out), err)
		}
		if ev.Comment != "" {
			continue
		}
		if ev.Name != string(ev.Data.Type) || ev.ID != ev.Data.Seq {
			t.Fatalf("frame %q: the event line or id disagree with the data", ev.Raw)
		}
		out = append(out, ev)
		if stop != nil && stop(ev) {
			return out
		}
	}
}

func streamStamps(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%d %s %s", ev.ID, ev.Name, ev.Data.RunID)
	}
	return out
}

func recStamps(evs []core.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%d %s %s", ev.Seq, ev.Type, ev.RunID)
	}
	return out
}

func isCompleted(ev sseEvent) bool { return ev.Name == string(core.EventCompleted) }

// Issue 13 acceptance 1: POST a message and read the stream, as `curl -N`
// would, to completed; the event names, order and sequence numbers are
// those the conversation's chat adapter received for the same run.
func TestSSEPostStreamsTheRunAsTheChatAdapterGetsIt(t *testing.T) {
	r := newRig(t)
	const key = "api:incident-42"
	// The adapter that owns the conversation, subscribed as cmd/opsgate
	// subscribes one.
	adapter := coretest.NewRecorder()
	r.eng.Subscribe("", adapter, core.SubscribeOptions{Owns: func(k string) bool { return k == key }})
	r.stack.LLM.Push(
		toolCalls(call("c1", "get_pods", `{"namespace":"payments"}`)),
		llmfake.Reply{Text: "Three payments pods are running; none restarted in the last hour."},
	)
	s := r.open(r.tokens["alice"], "POST", "/api/v1/conversations/"+url.PathEscape(key)+"/messages", "", `{"text":"how are the payments pods?"}`)
	got := s.readUntil(t, nil) // the server ends the stream after completed
	if len(got) == 0 || !isCompleted(got[len(got)-1]) {
		t.Fatalf("the stream did not end with completed:\n%s", strings.Join(streamStamps(got), "\n"))
	}
	run := got[0].Data.RunID
	adapter.WaitCompleted(t, 1)
	if d := cmp.Diff(recStamps(adapter.RunEvents(run)), streamStamps(got)); d != "" {
		t.Errorf("the stream differs from what the chat adapter received (-adapter +stream):\n%s", d)
	}
	var names []string
	for _, ev := range got {
		names = append(names, ev.Name)
	}
	for _, want := range []string{"ready", "generation.start", "tools.pending", "tool.executing", "tool.result", "token", "generation.complete", "completed"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("no %s event in the stream: %v", want, names)
		}
	}
	if last := got[len(got)-1].Data; last.Status != core.RunDone || !strings.Contains(last.Text, "Three payments pods") {
		t.Errorf("completed = %+v", last)
	}
	// The conversation is stored under its key, with alice's message.
	status, raw := r.do(r.tokens["bob"], "GET", "/api/v1/conversations/"+url.PathEscape(key), nil)
	if status != 200 || !strings.Contains(string(raw), "how are the payments pods?") {
		t.Errorf("GET the API conversation = %d %s", status, raw)
	}
}

// Issue 13 acceptance 2: a follower disconnects mid-run and reconnects
// with Last-Event-ID: it gets every event once, in order, no gap.
func TestSSEReconnectWithLastEventIDMissesNothing(t *testing.T) {
	r := newRig(t)
	const conv = "api:rollout"
	hold := make(chan struct{})
	r.stack.LLM.Push(llmfake.Reply{Text: strings.Repeat("the rollout of checkout is progressing normally ", 12), Hold: hold})
	// Only a conversation that exists can be followed (docs/design.md §17): the
	// follower starts once it does, from its first event.
	if err := r.eng.Handle(t.Context(), core.Inbound{ConvKey: conv, MessageID: "m1", User: carol, Text: "how is the rollout?", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	follow := r.open(r.tokens["bob"], "GET", "/api/v1/conversations/"+url.PathEscape(conv)+"/events?after=0", "", "")
	first := follow.readUntil(t, func(ev sseEvent) bool { return ev.Name == string(core.EventToken) })
	follow.Close() // the client drops mid-run
	close(hold)    // the run goes on without it
	r.rec.WaitCompleted(t, 1)

	last := strconv.FormatInt(first[len(first)-1].ID, 10)
	again := r.open(r.tokens["bob"], "GET", "/api/v1/conversations/"+url.PathEscape(conv)+"/events", last, "")
	rest := again.readUntil(t, isCompleted)
	if d := cmp.Diff(recStamps(r.rec.Events()), streamStamps(append(first, rest...))); d != "" {
		t.Errorf("the two connections together differ from the run's events (-run +streams):\n%s", d)
	}

	// ?after= does the same for a client that cannot set headers, and
	// ?run= replays one run from its start.
	after := r.open(r.tokens["bob"], "GET", "/api/v1/conversations/"+url.PathEscape(conv)+"/events?after="+last, "", "")
	if d := cmp.Diff(streamStamps(rest), streamStamps(after.readUntil(t, isCompleted))); d != "" {
		t.Errorf("?after= (-Last-Event-ID +after):\n%s", d)
	}
	if status, raw := r.do(r.tokens["bob"], "GET", "/api/v1/conversations/"+url.PathEscape(conv)+"/events?after=-3", nil); status != 400 {
		t.Errorf("a bad Last-Event-ID = %d %s, want 400", status, raw)
	}
	run := r.open(r.tokens["bob"], "GET", "/api/v1/conversations/"+url.PathEscape(conv)+"/events?run="+first[0].Data.RunID, "", "")
	if d := cmp.Diff(recStamps(r.rec.Events()), streamStamps(run.readUntil(t, isCompleted))); d != "" {
		t.Errorf("?run= (-run +replay):\n%s", d)
	}
}

// An idle stream gets a heartbeat comment; a revoked token ends it at the
// next one; Close (the server shutting down) ends every stream.
func TestSSEHeartbeatsAndRevocation(t *testing.T) {
	r := newRig(t, func(o *httpapi.Options, _ *enginetest.Stack) { o.Heartbeat = 20 * time.Millisecond })
	if _, err := r.stack.Store.Conversation(t.Context(), "api:quiet"); err != nil {
		t.Fatal(err)
	}
	s := r.open(r.tokens["alice"], "GET", "/api/v1/conversations/api:quiet/events", "", "")
	if ev, err := s.Next(); err != nil || ev.Comment == "" {
		t.Fatalf("the first thing on an idle stream = %+v, %v; want a heartbeat", ev, err)
	}
	if s.Comments[0] != "heartbeat" {
		t.Errorf("first comment = %q, want heartbeat", s.Comments[0])
	}
	toks, err := r.stack.Store.Tokens(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if tok.Person == "alice" {
			if err := r.stack.Store.RevokeToken(t.Context(), tok.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil || (ev.Comment != "heartbeat" && ev.Comment != "the token was revoked") {
			t.Fatalf("after the revocation the stream gave %+v, %v; want heartbeats, then its end", ev, err)
		}
	}
	if got := s.Comments[len(s.Comments)-1]; got != "the token was revoked" {
		t.Errorf("last comment = %q", got)
	}
}

// Issue 13 acceptance 7 (streams): bad input gets a specific 4xx with a
// JSON error before any stream starts, and nothing is stored.
func TestSSEBadInput(t *testing.T) {
	r := newRig(t)
	bob := r.tokens["bob"]
	big := `{"text":"` + strings.Repeat("x", 2<<20) + `"}`
	r.expectErrors(t, []badRequest{
		{"no token", "", "POST", "/api/v1/conversations/api:x/messages", `{"text":"hi"}`, 401, "unauthorized"},
		{"invalid token", "og_nope", "GET", "/api/v1/conversations/api:x/events", "", 401, "unauthorized"},
		{"2 MB body", bob, "POST", "/api/v1/conversations/api:x/messages", big, 413, "too_large"},
		{"malformed JSON", bob, "POST", "/api/v1/conversations/api:x/messages", `{"text":`, 400, "bad_json"},
		{"unknown field", bob, "POST", "/api/v1/conversations/api:x/messages", `{"text":"hi","run_as":"root"}`, 400, "unknown_field"},
		{"trailing bracket", bob, "POST", "/api/v1/conversations/api:x/messages", `{"text":"hi"}]`, 400, "bad_json"},
		{"empty text", bob, "POST", "/api/v1/conversations/api:x/messages", `{"text":"  "}`, 400, "invalid"},
		{"bad API name", bob, "POST", "/api/v1/conversations/" + url.PathEscape("api:no spaces") + "/messages", `{"text":"hi"}`, 400, "invalid_key"},
		{"unknown conversation", bob, "POST", "/api/v1/conversations/slack:T0:C0:1.2/messages", `{"text":"hi"}`, 404, "not_found"},
		{"follow unknown conversation", bob, "GET", "/api/v1/conversations/discord:nope/events", "", 404, "not_found"},
		{"follow an API conversation not started", bob, "GET", "/api/v1/conversations/api:x/events", "", 404, "not_found"},
	})
	cs, err := r.stack.Store.Conversations(t.Context(), core.ConversationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 0 {
		t.Errorf("bad requests stored conversations: %+v", cs)
	}
	if in, err := r.stack.Store.PendingInbound(t.Context()); err != nil || len(in) != 0 {
		t.Errorf("bad requests stored messages: %+v %v", in, err)
	}
}

// Issue 13 acceptance 8 (streams): a secret in a tool result and in the
// streamed answer is in neither the live stream nor a replay, byte for
// byte, though the store's transcript holds it.
func TestSSENeverCarriesSecrets(t *testing.T) {
	r := newRig(t)
	secret := "ghp_" + strings.Repeat("Ab3dE", 7) + "x"
	r.stack.LLM.Push(
		toolCalls(call("c1", "get_logs", `{"pod":"`+secret+`","tail":2}`)),
		// Split across chunks, as a tokenizer cuts a key.
		llmfake.Reply{Text: "The token " + secret + " leaked in the pod's log.", SplitChars: 3},
	)
	s := r.open(r.tokens["alice"], "POST", "/api/v1/conversations/api:leak/messages", "", `{"text":"check the logs"}`)
	live := s.readUntil(t, nil)
	replay := r.open(r.tokens["alice"], "GET", "/api/v1/conversations/api:leak/events?after=0", "", "").readUntil(t, isCompleted)
	msgs, err := r.stack.Store.Messages(t.Context(), "api:leak")
	if err != nil {
		t.Fatal(err)
	}
	if stored, _ := json.Marshal(msgs); !strings.Contains(string(stored), secret) {
		t.Fatal("the transcript does not hold the secret; the test proves nothing")
	}
	for name, evs := range map[string][]sseEvent{"live": live, "replay": replay} {
		var raw strings.Builder
		for _, ev := range evs {
			raw.WriteString(ev.Raw)
		}
		if strings.Contains(raw.String(), secret[:10]) {
			t.Errorf("the %s stream carries the secret:\n%s", name, raw.String())
		}
		if !strings.Contains(raw.String(), "[REDACTED:") {
			t.Errorf("the %s stream shows no redaction mark", name)
		}
	}
}

// "/stop" with nothing running answers at once instead of waiting for a
// completed that never comes; with a run going, it streams to the run's end.
func TestSSEStop(t *testing.T) {
	r := newRig(t)
	idle := r.open(r.tokens["alice"], "POST", "/api/v1/conversations/api:calm/messages", "", `{"text":"/stop"}`)
	if evs := idle.readUntil(t, nil); len(evs) != 0 || len(idle.Comments) != 1 || idle.Comments[0] != "nothing was running" {
		t.Fatalf("/stop with nothing running = %v %q", streamStamps(evs), idle.Comments)
	}
	hold := make(chan struct{})
	defer close(hold)
	r.stack.LLM.Push(llmfake.Reply{Text: "a long investigation", Hold: hold})
	busy := r.open(r.tokens["alice"], "POST", "/api/v1/conversations/api:calm/messages", "", `{"text":"investigate"}`)
	busy.readUntil(t, func(ev sseEvent) bool { return ev.Name == string(core.EventToken) })
	stop := r.open(r.tokens["alice"], "POST", "/api/v1/conversations/api:calm/messages", "", `{"text":"/stop"}`)
	evs := stop.readUntil(t, nil)
	if len(evs) == 0 || !isCompleted(evs[len(evs)-1]) || evs[len(evs)-1].Data.Status != core.RunStopped {
		t.Fatalf("/stop of a running run streamed %v, want it to end with completed (stopped)", streamStamps(evs))
	}
	if rest := busy.readUntil(t, nil); len(rest) == 0 || rest[len(rest)-1].Data.Status != core.RunStopped {
		t.Errorf("the run's own stream ended with %v", streamStamps(rest))
	}
}

// With several replicas on one store, a stream on one follows a run that
// another replica runs: the events come from the store, in order, none
// twice, to completed.
func TestSSEFollowsARunOnAnotherReplica(t *testing.T) {
	r := newRig(t, func(o *httpapi.Options, _ *enginetest.Stack) { o.TailEvery = 20 * time.Millisecond })
	// The other replica: an engine of its own over the same store.
	other := coretest.NewRecorder()
	d := r.stack.Deps(t, other)
	d.Display = r.red.Events()
	eng2 := enginetest.Engine(t, enginetest.Config(), d)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng2.Shutdown(ctx)
	})
	const key = "api:elsewhere"
	r.stack.LLM.Push(llmfake.Reply{Text: "first"})
	if err := eng2.Handle(t.Context(), core.Inbound{ConvKey: key, MessageID: "m1", User: carol, Text: "hello", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	other.WaitCompleted(t, 1)
	// The first run is kept (its replica's log written) before anyone
	// follows: a live follower starts after it.
	if _, err := eng2.Events(t.Context(), core.EventQuery{ConvKey: key}); err != nil {
		t.Fatal(err)
	}

	s := r.open(r.tokens["bob"], "GET", "/api/v1/conversations/"+key+"/events", "", "")
	r.stack.LLM.Push(llmfake.Reply{Text: "the rollout of checkout is progressing normally"})
	if err := eng2.Handle(t.Context(), core.Inbound{ConvKey: key, MessageID: "m2", User: carol, Text: "and now?", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got := s.readUntil(t, isCompleted)
	done := other.WaitCompleted(t, 2)
	if d := cmp.Diff(recStamps(other.RunEvents(done.RunID)), streamStamps(got)); d != "" {
		t.Errorf("the stream differs from the run on the other replica (-replica +stream):\n%s", d)
	}
	if n := len(r.rec.Events()); n != 0 {
		t.Fatalf("this replica's engine emitted %d events; the test proves nothing", n)
	}
}
