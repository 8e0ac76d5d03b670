package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// waitAnswer waits until chat shows text.
func waitAnswer(t *testing.T, tg *telegramtest.Server, chat int64, text string, log *coretest.SyncBuffer) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for !answered(tg.Messages(chat), text) {
		select {
		case <-tg.Changed():
		case <-deadline:
			t.Fatalf("no %q in the chat; messages: %+v\nlog:\n%s", text, tg.Messages(chat), log.String())
		}
	}
}

// After /new and a restart, a Telegram chat continues the new
// conversation: the model sees nothing from before /new.
func TestTelegramNewSurvivesRestart(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			tg := telegramtest.New(t)
			model := llmfake.New(t)
			model.Push(llmfake.Reply{Text: "Noted the old incident."}, llmfake.Reply{Text: "Fresh start acknowledged."})
			extra := fmt.Sprintf("telegram:\n  token: %q\n  api_url: %s\n  allowed_users: [42]\n", telegramtest.Token, tg.URL)
			cfg := writeConfig(t, dir, model.URL, "", extra)
			if store == "postgres" {
				usePostgres(t, cfg)
			}
			chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")

			s := serveConfig(t, cfg)
			tg.Push(tg.NewTextUpdate(chat, alice, "remember the OLD-INCIDENT in payments"))
			waitAnswer(t, tg, 42, "Noted the old incident.", s.log)
			tg.Push(tg.NewTextUpdate(chat, alice, "/new"))
			waitAnswer(t, tg, 42, "Started a fresh conversation.", s.log)
			s.stop(t)

			s = serveConfig(t, cfg)
			tg.Push(tg.NewTextUpdate(chat, alice, "what do you remember?"))
			waitAnswer(t, tg, 42, "Fresh start acknowledged.", s.log)
			reqs := model.Requests()
			last := string(reqs[len(reqs)-1].Raw)
			if strings.Contains(last, "OLD-INCIDENT") {
				t.Errorf("after /new and a restart the model still sees the old conversation:\n%s", last)
			}
			if !strings.Contains(last, "what do you remember?") {
				t.Errorf("the last model request lacks the new message:\n%s", last)
			}
		})
	}
}
