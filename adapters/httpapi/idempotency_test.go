package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

const idemPath = "/api/v1/conversations/api:deploys/messages"

// runOf checks that every event of a stream is of the run its response
// header names, and returns that run.
func runOf(t *testing.T, s *sseStream, evs []sseEvent) string {
	t.Helper()
	run := s.resp.Header.Get(httpapi.RunIDHeader)
	if run == "" {
		t.Fatalf("no %s header", httpapi.RunIDHeader)
	}
	for _, ev := range evs {
		if ev.Data.RunID != run {
			t.Fatalf("event %s of run %s on the stream of run %s", ev.Name, ev.Data.RunID, run)
		}
	}
	return run
}

// userMessages returns the texts of the person's messages in key's
// transcript.
func (r *rig) userMessages(key string) []string {
	r.t.Helper()
	msgs, err := r.stack.Store.Messages(r.t.Context(), key)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		if m.Role == core.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

// Issue 20 acceptance 5 (docs/design.md §16): the same Idempotency-Key and body
// again starts nothing: the repeat, sent while the first run is still
// going and again after it ended, is answered with the first request's
// run, replayed from the store and followed to its completed.
func TestIdempotencyKeyRepeatFollowsTheFirstRun(t *testing.T) {
	r := newRig(t)
	alice := r.tokens["alice"]
	hold := make(chan struct{})
	r.stack.LLM.Push(llmfake.Reply{Text: "Rolled back checkout to the previous release.", Hold: hold, SplitChars: 8})
	const body = `{"text":"roll back checkout"}`

	first := r.open(alice, "POST", idemPath, "", body, "Idempotency-Key", "rollback-42")
	head := first.readUntil(t, func(ev sseEvent) bool { return ev.Name == string(core.EventGenerationStart) })
	run := runOf(t, first, head)

	// While the first is still running: the same run, not a second one.
	// (Key order and spacing are not the body.)
	again := r.open(alice, "POST", idemPath, "", "{ \"text\" : \"roll back checkout\" }", "Idempotency-Key", "rollback-42")
	close(hold)
	rest := first.readUntil(t, nil)
	repeated := again.readUntil(t, nil)
	whole := append(head, rest...)
	if runOf(t, first, whole) != run || runOf(t, again, repeated) != run {
		t.Fatalf("the two answers carry different runs")
	}
	if len(repeated) == 0 || !isCompleted(repeated[len(repeated)-1]) {
		t.Fatalf("the repeat did not end with the run's completed: %v", streamStamps(repeated))
	}
	if d := cmp.Diff(streamStamps(whole), streamStamps(repeated)); d != "" {
		t.Errorf("the repeat differs from the first request's stream (-first +repeat):\n%s", d)
	}

	// After the run ended: replayed whole from the store.
	later := r.open(alice, "POST", idemPath, "", body, "Idempotency-Key", "rollback-42")
	if d := cmp.Diff(streamStamps(whole), streamStamps(later.readUntil(t, nil))); d != "" {
		t.Errorf("a repeat after the run (-first +repeat):\n%s", d)
	}
	if runOf(t, later, nil) != run {
		t.Error("the late repeat names another run")
	}

	runs, err := r.stack.Store.ConversationRuns(t.Context(), "api:deploys")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != run {
		t.Errorf("runs = %+v, want only %s", runs, run)
	}
	if got := r.userMessages("api:deploys"); len(got) != 1 {
		t.Errorf("the transcript holds the message %d times: %q", len(got), got)
	}
	if n := len(r.stack.LLM.Requests()); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}

	// Another key is another message.
	r.stack.LLM.Push(llmfake.Reply{Text: "Rolled back again."})
	other := r.open(alice, "POST", idemPath, "", body, "Idempotency-Key", "rollback-43")
	if got := runOf(t, other, other.readUntil(t, nil)); got == run {
		t.Error("another key was answered with the first key's run")
	}
}

// Issue 20 acceptance 5: two identical requests at once: one claim wins
// and runs the message; the others follow its run.
func TestIdempotencyKeyConcurrentRepeatsRunOnce(t *testing.T) {
	r := newRig(t)
	alice := r.tokens["alice"]
	hold := make(chan struct{})
	r.stack.LLM.Push(llmfake.Reply{Text: "Restarted the payments workers.", Hold: hold})
	const n = 6
	var wg sync.WaitGroup
	runs := make([]string, n)
	ends := make([]string, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s := r.open(alice, "POST", idemPath, "", `{"text":"restart the payments workers"}`, "Idempotency-Key", "restart-7")
			evs := s.readUntil(t, nil)
			runs[i] = runOf(t, s, evs)
			if len(evs) > 0 {
				ends[i] = evs[len(evs)-1].Name + " " + evs[len(evs)-1].Data.RunID
			}
		}()
	}
	close(start)
	r.stack.LLM.WaitRequests(1, 10*time.Second)
	close(hold)
	wg.Wait()
	for i := range n {
		if runs[i] != runs[0] || ends[i] != "completed "+runs[0] {
			t.Errorf("request %d: run %s, ended with %q; want run %s to completed", i, runs[i], ends[i], runs[0])
		}
	}
	if got := r.userMessages("api:deploys"); len(got) != 1 {
		t.Errorf("the transcript holds the message %d times", len(got))
	}
	if got := len(r.stack.LLM.Requests()); got != 1 {
		t.Errorf("the model was called %d times, want 1", got)
	}
}

// Issue 20 acceptance 5: the same key with another body is 422; a key
// that is not 1-200 printable ASCII characters is 400; a request refused
// with a 4xx (or refused by the engine) keeps no key.
func TestIdempotencyKeyRefusals(t *testing.T) {
	r := newRig(t)
	alice := r.tokens["alice"]
	r.stack.LLM.Push(llmfake.Reply{Text: "Scaled."})
	r.open(alice, "POST", idemPath, "", `{"text":"scale web to 3"}`, "Idempotency-Key", "k1").readUntil(t, nil)

	post := func(key, body string) (int, string, []byte) {
		t.Helper()
		req, err := http.NewRequest("POST", r.srv.URL+idemPath, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+alice)
		req.Header["Idempotency-Key"] = []string{key}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw := make([]byte, 4096)
		n, _ := resp.Body.Read(raw)
		return resp.StatusCode, resp.Header.Get(httpapi.RunIDHeader), raw[:n]
	}
	expect := func(name, key, body string, status int, code string) {
		t.Helper()
		got, run, raw := post(key, body)
		if got != status {
			t.Fatalf("%s: status %d %s, want %d", name, got, raw, status)
		}
		if c, _ := errorCode(t, raw); c != code {
			t.Errorf("%s: code %q, want %q", name, c, code)
		}
		if run != "" {
			t.Errorf("%s: a refusal names run %s", name, run)
		}
	}
	expect("same key, other body", "k1", `{"text":"scale web to 30"}`, 422, "idempotency_key_reused")
	expect("empty key", "", `{"text":"hi"}`, 400, "invalid_idempotency_key")
	expect("201 characters", strings.Repeat("k", 201), `{"text":"hi"}`, 400, "invalid_idempotency_key")
	expect("not ASCII", "clé", `{"text":"hi"}`, 400, "invalid_idempotency_key")
	expect("a tab", "k\t2", `{"text":"hi"}`, 400, "invalid_idempotency_key")
	if got, _, raw := post(strings.Repeat("~", 200)+"", `{"text":"`); got != 400 {
		t.Errorf("200 printable characters with a bad body = %d %s, want 400 bad_json (the key is valid)", got, raw)
	}

	// 4xx answers keep no key: after each, the key is free for a message.
	for _, bad := range []struct{ body, code string }{
		{`{"text":"  "}`, "invalid"},
		{`{"text":"hi","as":"root"}`, "unknown_field"},
		{`{"text":"hi","text":"ho"}`, "bad_json"},
	} {
		expect("refused body "+bad.code, "k2", bad.body, 400, bad.code)
	}
	r.stack.LLM.Push(llmfake.Reply{Text: "Done."})
	s := r.open(alice, "POST", idemPath, "", `{"text":"something else"}`, "Idempotency-Key", "k2")
	if evs := s.readUntil(t, nil); len(evs) == 0 || !isCompleted(evs[len(evs)-1]) {
		t.Fatalf("k2 after refusals did not run: %v", streamStamps(evs))
	}

	// Refused by the engine after the key was claimed (shutting down):
	// the key is released.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.eng.Shutdown(ctx)
	expect("engine refuses", "k3", `{"text":"and now?"}`, 503, "shutting_down")
	_, claimed, err := r.stack.Store.ClaimIdempotencyKey(t.Context(),
		core.IdempotencyKey{ConvKey: "api:deploys", Key: "k3", BodyHash: []byte{1}, RunID: "probe", CreatedAt: time.Now()}, time.Now().Add(-time.Hour))
	if err != nil || !claimed {
		t.Errorf("after the engine refused, k3 is still held (claimed=%t, %v)", claimed, err)
	}
}

// A message with a key sent while another run of the conversation is
// going gets a run of its own (it does not steer the other, whose id it
// could not name), and its stream carries that run alone.
func TestIdempotencyKeyWhileAnotherRunIsActive(t *testing.T) {
	r := newRig(t)
	hold := make(chan struct{})
	r.stack.LLM.Push(
		llmfake.Reply{Text: "Checking.", Hold: hold, ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "get_pods", Arguments: `{"namespace":"prod"}`}}},
		llmfake.Reply{Text: "carol's answer"},
		llmfake.Reply{Text: "alice's answer"},
	)
	if err := r.eng.Handle(t.Context(), core.Inbound{ConvKey: "api:deploys", MessageID: "m1", User: carol, Text: "check prod", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r.rec.Wait(t, 5*time.Second, 1, func(ev core.Event) bool { return ev.Type == core.EventGenerationStart })
	s := r.open(r.tokens["alice"], "POST", idemPath, "", `{"text":"and staging?"}`, "Idempotency-Key", "staging-1")
	close(hold)
	evs := s.readUntil(t, nil)
	run := runOf(t, s, evs)
	if len(evs) == 0 || !isCompleted(evs[len(evs)-1]) || evs[len(evs)-1].Data.Text != "alice's answer" {
		t.Fatalf("the keyed message's stream = %v, want its own run to completed with its answer", streamStamps(evs))
	}
	if carols := r.rec.WaitCompleted(t, 1); carols.RunID == run || carols.Text != "carol's answer" {
		t.Errorf("carol's run = %s %q; the keyed message joined it", carols.RunID, carols.Text)
	}
}

// Two identical requests at once, and the one that claimed the key is
// then refused (over the rate limit, say): it releases the key, and the
// other runs the message itself instead of following a run that never
// starts. (The claim of the refused one is made here on the store.)
func TestIdempotencyKeyReleasedByARefusedFirst(t *testing.T) {
	claims := make(chan core.IdempotencyKey, 100)
	r := newRig(t, func(o *httpapi.Options, _ *enginetest.Stack) { o.Store = claimsSeen{o.Store, claims} })
	refused := core.IdempotencyKey{ConvKey: "api:deploys", Key: "retry-9", RunID: "never-started", CreatedAt: time.Now().UTC()}
	refused.BodyHash = sha256Of(`{"text":"restart web"}`)
	if _, claimed, err := r.stack.Store.ClaimIdempotencyKey(t.Context(), refused, time.Now().Add(-time.Hour)); err != nil || !claimed {
		t.Fatalf("claim: %t, %v", claimed, err)
	}
	r.stack.LLM.Push(llmfake.Reply{Text: "Restarted web."})
	got := make(chan []sseEvent, 1)
	var run string
	go func() {
		s := r.open(r.tokens["alice"], "POST", idemPath, "", `{"text":"restart web"}`, "Idempotency-Key", "retry-9")
		run = s.resp.Header.Get(httpapi.RunIDHeader)
		got <- s.readUntil(t, nil)
	}()
	// The repeat found the key held by the refused request's run …
	if held := <-claims; held.RunID != refused.RunID {
		t.Fatalf("the repeat's first claim found %+v", held)
	}
	// … which releases it now.
	if err := r.stack.Store.ReleaseIdempotencyKey(t.Context(), refused.ConvKey, refused.Key, refused.RunID); err != nil {
		t.Fatal(err)
	}
	var evs []sseEvent
	select {
	case evs = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the repeat still follows the refused request's run")
	}
	if len(evs) == 0 || !isCompleted(evs[len(evs)-1]) || evs[len(evs)-1].Data.Text != "Restarted web." || run == refused.RunID || evs[0].Data.RunID != run {
		t.Errorf("the repeat = run %s, %v; want the message run as a run of its own", run, streamStamps(evs))
	}
}

// sha256Of is the hash the API keeps of a message body (its request
// re-encoded).
func sha256Of(body string) []byte {
	var req struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(req)
	h := sha256.Sum256(b)
	return h[:]
}

// claimsSeen is the API's store, telling the test what each claim of an
// Idempotency-Key found.
type claimsSeen struct {
	httpapi.Store
	found chan<- core.IdempotencyKey
}

func (c claimsSeen) ClaimIdempotencyKey(ctx context.Context, k core.IdempotencyKey, notBefore time.Time) (core.IdempotencyKey, bool, error) {
	held, claimed, err := c.Store.ClaimIdempotencyKey(ctx, k, notBefore)
	select {
	case c.found <- held:
	default:
	}
	return held, claimed, err
}

// The key is kept in the store, so a repeat that reaches another replica
// is answered there with the run the first replica is running, followed
// from the store to its completed; the message runs once.
func TestIdempotencyKeyRepeatOnAnotherReplica(t *testing.T) {
	r := newRig(t)
	// The other replica: an engine and an API of its own over the same store.
	d := r.stack.Deps(t, coretest.NewRecorder())
	d.Display = r.red.Events()
	eng2 := enginetest.Engine(t, enginetest.Config(), d)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng2.Shutdown(ctx)
	})
	api2 := httpapi.New(httpapi.Options{Store: r.stack.Store, Tokens: r.stack.Store, Engine: eng2, Redact: r.red.String,
		Logger: coretest.Logger(t), TailEvery: 20 * time.Millisecond})
	srv2 := httptest.NewServer(api2)
	t.Cleanup(srv2.Close)
	t.Cleanup(api2.Close)
	replica2 := *r
	replica2.srv = srv2

	hold := make(chan struct{})
	r.stack.LLM.Push(llmfake.Reply{Text: "Failed over the primary database.", Hold: hold, SplitChars: 6})
	const body = `{"text":"fail over the primary"}`
	first := r.open(r.tokens["alice"], "POST", idemPath, "", body, "Idempotency-Key", "failover-1")
	head := first.readUntil(t, func(ev sseEvent) bool { return ev.Name == string(core.EventGenerationStart) })
	run := runOf(t, first, head)
	again := replica2.open(r.tokens["alice"], "POST", idemPath, "", body, "Idempotency-Key", "failover-1")
	close(hold)
	whole := append(head, first.readUntil(t, nil)...)
	repeated := again.readUntil(t, nil)
	if runOf(t, again, repeated) != run {
		t.Fatal("the other replica answered with another run")
	}
	if d := cmp.Diff(streamStamps(whole), streamStamps(repeated)); d != "" {
		t.Errorf("the repeat on the other replica differs from the first stream (-first +repeat):\n%s", d)
	}
	if got := r.userMessages("api:deploys"); len(got) != 1 {
		t.Errorf("the transcript holds the message %d times", len(got))
	}
	if n := len(r.stack.LLM.Requests()); n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}
}
