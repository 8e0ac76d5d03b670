package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 25: serve asks Telegram what the adapter needs (getMe,
// setMyCommands, deleteWebhook) while the store is still opening, rather
// than after it. The store is held back by the migration lock another
// replica would hold; the handshake reaches the Bot API meanwhile, the
// first long poll only once the store is open, and nothing is asked twice.
func TestServeAsksTelegramWhileTheStoreOpens(t *testing.T) {
	dir := t.TempDir()
	llm := llmfake.New(t)
	tg := telegramtest.New(t)
	cfg := writeConfig(t, dir, llm.URL, "", telegramConfig(tg))
	url := usePostgres(t, cfg)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const lock = `hashtextextended('opsgate:migrate', 0)`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+lock+`)`); err != nil {
		t.Fatal(err)
	}

	serve := launchReplica(t, dir, cfg, "serve")

	waitFor(t, 30*time.Second, "the Telegram handshake while the store waits for the migration lock", func() bool {
		for _, m := range []string{"getMe", "setMyCommands", "deleteWebhook"} {
			if len(tg.CallsTo(m, 0)) == 0 {
				return false
			}
		}
		return true
	})
	if n := len(tg.PollStarts()); n != 0 || serve.serving() {
		t.Fatalf("serve polled (%d) or served before its store was open:\n%s", n, serve.log.String())
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lock+`)`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the first long poll once the store is open", func() bool { return len(tg.PollStarts()) > 0 })
	for _, m := range []string{"getMe", "setMyCommands", "deleteWebhook"} {
		if n := len(tg.CallsTo(m, 0)); n != 1 {
			t.Errorf("%s was called %d times; want once", m, n)
		}
	}
}
