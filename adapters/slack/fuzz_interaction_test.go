package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core"
	"github.com/slack-go/slack"
)

// recordingEngine records what the adapter asks of the engine. Decisions
// find no approval; run-1 is running everywhere.
type recordingEngine struct {
	mu        sync.Mutex
	decisions []core.Decision
	stops     []string
}

func (e *recordingEngine) Handle(context.Context, core.Inbound) error { return nil }

func (e *recordingEngine) Stop(_ context.Context, key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stops = append(e.stops, key)
	return true
}

func (e *recordingEngine) Decide(_ context.Context, d core.Decision) (core.Approval, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.decisions = append(e.decisions, d)
	return core.Approval{}, core.ErrNotFound
}

func (e *recordingEngine) Status(context.Context, string) (core.Status, error) {
	return core.Status{Busy: true, ActiveRun: &core.Run{ID: "run-1"}}, nil
}

const fuzzSigningSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// FuzzInteractionPayload posts arbitrary interaction payloads to the HTTP
// mode endpoint, signed as Slack signs them. A click is never trusted
// beyond its payload: every decision is for an approval id that an
// opsgate button of a block_actions payload carried ("a:<id>" approves,
// "d:<id>" denies), as the user who clicked, at most one per such button;
// and a run is stopped only by a Stop button ("s:<run id prefix>") of
// the running run.
func FuzzInteractionPayload(f *testing.F) {
	fake := slacktest.New(f)
	fake.AddUser("U0BOB", "bob")
	for _, s := range []string{
		`{"type":"block_actions","user":{"id":"U0BOB","name":"bob"},"container":{"type":"message","channel_id":"C0OPS","message_ts":"1.2","thread_ts":"1.1"},"actions":[{"block_id":"actions","action_id":"opsgate:a:0123456789abcdef0123456789abcdef","value":"a:0123456789abcdef0123456789abcdef","type":"button"}]}`,
		`{"type":"block_actions","user":{"id":"U0BOB"},"channel":{"id":"C0OPS"},"message":{"ts":"1.2"},"actions":[{"block_id":"actions","action_id":"opsgate:d:x","value":"d:x"},{"block_id":"actions","action_id":"other:a:y","value":"a:y"},{"block_id":"actions","action_id":"opsgate:s:run","value":"s:run"}]}`,
		`{"type":"block_actions","user":{"id":"U0MALLORY"},"container":{"channel_id":"C0OPS"},"actions":[{"block_id":"actions","action_id":"opsgate:s:run-2","value":"s:run-2"},{"block_id":"actions","action_id":"opsgate:a:","value":"a:"}]}`,
		`{"type":"view_submission","user":{"id":"U0BOB"},"channel":{"id":"C0OPS"},"actions":[{"block_id":"actions","action_id":"opsgate:a:z","value":"a:z"}]}`,
		`{"type":"block_actions","user":{"id":""},"container":{"channel_id":"C0OPS"},"actions":[{"block_id":"actions","action_id":"opsgate:a:z","value":"a:z"}]}`,
	} {
		f.Add(s)
	}
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, payload string) {
		eng := &recordingEngine{}
		a, err := New(Config{BotToken: slacktest.BotToken, SigningSecret: fuzzSigningSecret, APIURL: fake.APIURL(),
			Channels: []string{"C0OPS"}, Approvers: []string{"U0BOB"}}, log)
		if err != nil {
			t.Fatal(err)
		}
		body := "payload=" + url.QueryEscape(payload)
		req := httptest.NewRequest(http.MethodPost, PathInteractive, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sign(req.Header, body)
		rec := httptest.NewRecorder()
		a.Handler(eng).ServeHTTP(rec, req)
		if err := a.Close(); err != nil { // waits for the click's work
			t.Fatal(err)
		}

		// What the payload says, read as the handler reads it.
		var cb slack.InteractionCallback
		if err := json.Unmarshal([]byte(payload), &cb); err != nil {
			if rec.Code != http.StatusBadRequest || len(eng.decisions)+len(eng.stops) > 0 {
				t.Fatalf("undecodable payload: status %d, decisions %+v, stops %q", rec.Code, eng.decisions, eng.stops)
			}
			return
		}
		buttons := map[string]int{} // value -> opsgate buttons carrying it
		if cb.Type == slack.InteractionTypeBlockActions {
			for _, act := range cb.ActionCallback.BlockActions {
				if strings.HasPrefix(act.ActionID, actionIDPrefix) {
					buttons[act.Value]++
				}
			}
		}
		for _, d := range eng.decisions {
			value := "d:" + d.ApprovalID
			if d.Approve {
				value = "a:" + d.ApprovalID
			}
			if d.ApprovalID == "" || buttons[value] == 0 {
				t.Fatalf("decision %+v that no button of the payload carried: %s", d, payload)
			}
			buttons[value]--
			if d.Actor.ID != cb.User.ID {
				t.Fatalf("decided as %q, clicked by %q", d.Actor.ID, cb.User.ID)
			}
		}
		for _, key := range eng.stops {
			stopped := false
			for v, n := range buttons {
				run, ok := strings.CutPrefix(v, "s:")
				stopped = stopped || ok && n > 0 && run != "" && strings.HasPrefix("run-1", run)
			}
			if !stopped {
				t.Fatalf("stopped %s without a Stop button of run-1: %s", key, payload)
			}
		}
	})
}

// sign sets the headers Slack signs a request with.
func sign(h http.Header, body string) {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(fuzzSigningSecret))
	mac.Write([]byte("v0:" + ts + ":" + body))
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
}
