package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// TestServeRunsTelegramAndStopsCleanly drives `opsgate serve` with the
// Telegram adapter: a private message is answered through the model, and a
// shutdown confirms the handled update so it is not delivered again.
func TestServeRunsTelegramAndStopsCleanly(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	model.Push(llmfake.Reply{Text: "All pods in prod are healthy."})
	extra := fmt.Sprintf("telegram:\n  token: %q\n  api_url: %s\n  allowed_users: [42]\n", telegramtest.Token, tg.URL)
	cfg := writeConfig(t, dir, model.URL, "", extra)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut coretest.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, []string{"serve", "--config", cfg}, nil, &out, &errOut, testEnv()) }()
	waitLog(t, &errOut, done, regexp.MustCompile(`msg="opsgate serving".*adapters=\[telegram\]`))

	upd := tg.NewTextUpdate(telegramtest.PrivateChat(42), telegramtest.User(42, "alice"), "is prod ok?")
	tg.Push(upd)
	deadline := time.After(10 * time.Second)
	for !answered(tg.Messages(42), "All pods in prod are healthy.") {
		select {
		case <-tg.Changed():
		case code := <-done:
			t.Fatalf("serve exited with %d:\n%s", code, errOut.String())
		case <-deadline:
			t.Fatalf("no answer in the chat; messages: %+v\nlog:\n%s", tg.Messages(42), errOut.String())
		}
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1", n)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited with %d:\n%s", code, errOut.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	if got := tg.Confirmed(); got <= upd.UpdateID {
		t.Errorf("confirmed offset = %d after shutdown, want past update %d", got, upd.UpdateID)
	}
}

func answered(msgs []telegramtest.Message, text string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Visible, text) {
			return true
		}
	}
	return false
}

// waitLog waits for a log line of serve, failing if it exits first.
func waitLog(t *testing.T, log *coretest.SyncBuffer, done <-chan int, re *regexp.Regexp) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !re.MatchString(log.String()) {
		select {
		case code := <-done:
			t.Fatalf("serve exited early with %d:\n%s", code, log.String())
		case <-deadline:
			t.Fatalf("no log line matching %s:\n%s", re, log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestServeStopsOnARejectedTelegramToken(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	extra := fmt.Sprintf("telegram:\n  token: \"123456:revoked\"\n  api_url: %s\n  allowed_users: [42]\n", tg.URL)
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", extra)
	var out, errOut coretest.SyncBuffer
	code := Main(context.Background(), []string{"serve", "--config", cfg}, nil, &out, &errOut, testEnv())
	if code != exitError || !strings.Contains(errOut.String(), "check telegram.token") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 naming telegram.token", code, errOut.String())
	}
}

func TestServeWebhookWithoutSecretStartsNothing(t *testing.T) {
	dir := t.TempDir()
	extra := fmt.Sprintf("telegram:\n  token: %q\n  webhook_url: https://ops.example.com/telegram\n", telegramtest.Token)
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", extra)
	var out, errOut coretest.SyncBuffer
	code := Main(context.Background(), []string{"serve", "--config", cfg}, nil, &out, &errOut, testEnv())
	if code != exitError || !strings.Contains(errOut.String(), "secret") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 about the webhook secret", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("the store was created although the configuration is invalid")
	}
}

// TestServeMountsSlackHTTPMode checks that serve exposes Slack's HTTP-mode
// endpoints on server.listen, verified with the signing secret.
func TestServeMountsSlackHTTPMode(t *testing.T) {
	dir := t.TempDir()
	sl := slacktest.New(t)
	const secret = "test-signing-secret"
	extra := fmt.Sprintf("slack:\n  bot_token: %s\n  signing_secret: %s\n  api_url: %s\n  channels: [\"*\"]\n",
		slacktest.BotToken, secret, sl.APIURL())
	cfg := writeConfig(t, dir, "http://127.0.0.1:1/v1", "", extra)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut coretest.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, []string{"serve", "--config", cfg}, nil, &out, &errOut, testEnv()) }()
	addrRE := regexp.MustCompile(`msg="opsgate serving".* addr=(\S+).*adapters=\[slack\]`)
	waitLog(t, &errOut, done, addrRE)
	base := "http://" + addrRE.FindStringSubmatch(errOut.String())[1]

	body := []byte(`{"type":"url_verification","challenge":"c-123","token":"x"}`)
	for _, tc := range []struct {
		name   string
		secret string
		want   int
	}{{"signed", secret, http.StatusOK}, {"bad signature", "wrong-secret", http.StatusUnauthorized}} {
		req := slacktest.SignedRequest(t, base+"/slack/events", tc.secret, body, "application/json", time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == http.StatusOK && !strings.Contains(string(got), "c-123")) {
			t.Errorf("%s: POST /slack/events = %d %q, want %d (and the challenge when signed)", tc.name, resp.StatusCode, got, tc.want)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited with %d:\n%s", code, errOut.String())
	}
}
