package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
)

// recordingEngine records what an adapter asks of the engine. Decisions
// find no approval, and nothing is running.
type recordingEngine struct {
	mu        sync.Mutex
	decisions []core.Decision
	stops     []string
	inbound   []core.Inbound
}

func (e *recordingEngine) Handle(_ context.Context, in core.Inbound) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inbound = append(e.inbound, in)
	return nil
}

func (e *recordingEngine) Stop(_ context.Context, key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stops = append(e.stops, key)
	return false
}

func (e *recordingEngine) Decide(_ context.Context, d core.Decision) (core.Approval, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.decisions = append(e.decisions, d)
	return core.Approval{}, core.ErrNotFound
}

func (e *recordingEngine) Status(context.Context, string) (core.Status, error) {
	return core.Status{}, nil
}

const (
	fuzzAllowed  = 42
	fuzzApprover = 43
	fuzzSecret   = "fuzz-secret_token-0123"
)

// FuzzWebhookUpdate posts arbitrary update JSON to the webhook, as
// Telegram would with the right secret token. A press is never trusted
// beyond its payload: the adapter decides at most one approval per
// update, only for a callback_query whose data is "a:<id>" (approve) or
// "d:<id>" (deny), with exactly that id, as the user who pressed; it
// stops nothing for anyone but an allowed user or approver; and a message
// reaches the engine only from an allowed user, as that user.
func FuzzWebhookUpdate(f *testing.F) {
	tg := telegramtest.New(f)
	for _, s := range []string{
		`{"update_id":1,"callback_query":{"id":"q1","from":{"id":43,"first_name":"B"},"message":{"message_id":7,"chat":{"id":42,"type":"private"}},"data":"a:0123456789abcdef0123456789abcdef"}}`,
		`{"update_id":2,"callback_query":{"id":"q2","from":{"id":99},"data":"d:x:y"}}`,
		`{"update_id":3,"callback_query":{"id":"q3","from":{"id":42},"message":{"message_id":8,"chat":{"id":42,"type":"private"}},"data":"s:run-1"}}`,
		`{"update_id":4,"callback_query":{"id":"q4","data":"a:nobody-pressed"}}`,
		`{"update_id":5,"message":{"message_id":9,"from":{"id":42,"first_name":"A"},"chat":{"id":42,"type":"private"},"date":1,"text":"/stop"},"callback_query":{"id":"q5","from":{"id":42},"data":"a:both"}}`,
		`{"update_id":6,"message":{"message_id":10,"from":{"id":7},"chat":{"id":-100,"type":"supergroup"},"date":1,"text":"@opsgate_bot how is web?"}}`,
		`{"update_id":7,"message":{"message_id":11,"from":{"id":42},"chat":{"id":42,"type":"private"},"date":1,"text":"restart web"}} trailing`,
	} {
		f.Add([]byte(s))
	}
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, body []byte) {
		eng := &recordingEngine{}
		a, err := New(Config{Token: "123456:fuzz", APIURL: tg.URL, WebhookURL: "https://bot.example.com/hook",
			WebhookSecret: fuzzSecret, AllowedUsers: []int64{fuzzAllowed}, Approvers: []int64{fuzzApprover}}, log)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		req := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(body))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", fuzzSecret)
		rec := httptest.NewRecorder()
		a.WebhookHandler(eng).ServeHTTP(rec, req)

		// What the payload says, read as the handler reads it.
		var u tgbotapi.Update
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&u); err != nil {
			if rec.Code != http.StatusBadRequest || len(eng.decisions)+len(eng.stops)+len(eng.inbound) > 0 {
				t.Fatalf("undecodable update: status %d, engine asked %+v", rec.Code, eng)
			}
			return
		}
		eng.mu.Lock()
		defer eng.mu.Unlock()
		q := u.CallbackQuery
		if len(eng.decisions) > 1 {
			t.Fatalf("%d decisions from one update", len(eng.decisions))
		}
		for _, d := range eng.decisions {
			if u.Message != nil || q == nil || q.From == nil {
				t.Fatalf("decision %+v from an update without a press: %s", d, body)
			}
			action, id, _ := strings.Cut(q.Data, ":")
			if id != d.ApprovalID || d.ApprovalID == "" || (action == "a") != d.Approve || action != "a" && action != "d" {
				t.Fatalf("decision %+v from data %q", d, q.Data)
			}
			if d.Actor.ID != "telegram:"+strconv.FormatInt(q.From.ID, 10) {
				t.Fatalf("decided as %q, pressed by %d", d.Actor.ID, q.From.ID)
			}
		}
		for _, key := range eng.stops {
			var who int64
			switch {
			case u.Message != nil && u.Message.From != nil:
				who = u.Message.From.ID
			case q != nil && q.From != nil && strings.HasPrefix(q.Data, "s:"):
				who = q.From.ID
			default:
				t.Fatalf("stopped %s from %s", key, body)
			}
			if who != fuzzAllowed && who != fuzzApprover {
				t.Fatalf("user %d stopped %s", who, key)
			}
		}
		for _, in := range eng.inbound {
			if u.Message == nil || u.Message.From == nil || u.Message.From.ID != fuzzAllowed || in.User.ID != "telegram:42" {
				t.Fatalf("inbound %+v from %s", in, body)
			}
		}
	})
}
