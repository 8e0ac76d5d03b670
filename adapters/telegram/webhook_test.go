package telegram_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

const secret = "s3cret-token_for-tests"

func post(t *testing.T, url, secret string, u tgbotapi.Update) int {
	t.Helper()
	body, _ := json.Marshal(u)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestWebhookSecretAndRedelivery(t *testing.T) {
	s := newStack(t, func(c *telegram.Config, _ *core.Config) {
		c.WebhookURL, c.WebhookSecret = "https://bot.example.com/telegram/hook", secret
	})
	waitFor(t, 10*time.Second, "setWebhook", func() bool { return s.tg.Webhook().URL != "" })
	if wh := s.tg.Webhook(); wh.URL != "https://bot.example.com/telegram/hook" || wh.Secret != secret {
		t.Errorf("webhook = %+v, want the URL with its secret token", wh)
	}
	if p := s.ad.WebhookPath(); p != "/telegram/hook" {
		t.Errorf("WebhookPath = %q", p)
	}
	srv := httptest.NewServer(s.ad.WebhookHandler(s.eng))
	defer srv.Close()

	u := s.tg.NewTextUpdate(telegramtest.PrivateChat(alice.ID), alice, "how is web?")
	for _, bad := range []string{"", "wrong", secret + "x"} {
		if code := post(t, srv.URL, bad, u); code != http.StatusUnauthorized {
			t.Errorf("secret %q: status %d, want 401", bad, code)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(s.llm.Requests()); n != 0 {
		t.Fatalf("an unauthenticated update reached the model (%d requests)", n)
	}

	s.llm.Push(llmfake.Reply{Text: "web is healthy."})
	if code := post(t, srv.URL, secret, u); code != http.StatusOK {
		t.Fatalf("status %d, want 200", code)
	}
	s.finalDraft(alice.ID, "web is healthy.")
	if code := post(t, srv.URL, secret, u); code != http.StatusOK {
		t.Errorf("redelivery: status %d, want 200 (Telegram must not retry)", code)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(s.llm.Requests()); n != 1 {
		t.Errorf("update delivered twice reached the model %d times, want once", n)
	}
	if n := len(s.tg.Messages(alice.ID)); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
	if n := len(s.tg.CallsTo("getUpdates", 0)); n != 0 {
		t.Errorf("webhook mode polled getUpdates %d times", n)
	}
}

func TestWebhookNeedsSecret(t *testing.T) {
	_, err := telegram.New(telegram.Config{Token: telegramtest.Token, WebhookURL: "https://bot.example.com/hook"}, nil)
	if err == nil || !strings.Contains(err.Error(), "webhook_secret") {
		t.Errorf("New without a webhook secret = %v, want an error naming webhook_secret", err)
	}
}

// A message that arrives while the engine refuses it (shutting down) must
// not be acknowledged: the next process gets it from Telegram again.
func TestPollingOffsetOnlyPastStoredUpdates(t *testing.T) {
	s := newStack(t)
	waitFor(t, 10*time.Second, "polling", func() bool { return len(s.tg.CallsTo("getUpdates", 0)) > 0 })
	s.eng.Shutdown(t.Context())
	u := s.say(alice, "are you there?")
	waitFor(t, 10*time.Second, "the update to be fetched twice", func() bool {
		n := 0
		for _, c := range s.tg.CallsTo("getUpdates", 0) {
			if off, _ := strconv.Atoi(c.Params.Get("offset")); off <= u.UpdateID {
				n++
			}
		}
		return n >= 3
	})
	s.stop()
	if c := s.tg.Confirmed(); c > u.UpdateID {
		t.Fatalf("offset %d confirmed past update %d, which the engine never stored", c, u.UpdateID)
	}
	// A restarted process gets the message and answers it.
	s.llm.Push(llmfake.Reply{Text: "Yes, I am here."})
	s.start()
	s.finalDraft(alice.ID, "Yes, I am here.")
	if got := s.llm.Requests(); len(got) != 1 {
		t.Errorf("model requests = %d, want 1", len(got))
	}
}
