package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// serveUntilStopped runs `opsgate serve` in-process until the returned stop is
// called (which waits for a clean exit).
func serveUntilStopped(t *testing.T, cfg string, ready *regexp.Regexp) (log *coretest.SyncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log = &coretest.SyncBuffer{}
	var out coretest.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, []string{"serve", "--config", cfg}, nil, &out, log, testEnv()) }()
	waitLog(t, log, done, ready)
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("serve exited with %d:\n%s", code, log.String())
			}
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop")
		}
	}
	t.Cleanup(stop)
	return log, stop
}

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
			ready := regexp.MustCompile(`msg="opsgate serving".*adapters=\[telegram\]`)
			chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")

			log, stop := serveUntilStopped(t, cfg, ready)
			tg.Push(tg.NewTextUpdate(chat, alice, "remember the OLD-INCIDENT in payments"))
			waitAnswer(t, tg, 42, "Noted the old incident.", log)
			tg.Push(tg.NewTextUpdate(chat, alice, "/new"))
			waitAnswer(t, tg, 42, "Started a fresh conversation.", log)
			stop()

			log, _ = serveUntilStopped(t, cfg, ready)
			tg.Push(tg.NewTextUpdate(chat, alice, "what do you remember?"))
			waitAnswer(t, tg, 42, "Fresh start acknowledged.", log)
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
