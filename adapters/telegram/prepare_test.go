package telegram_test

import (
	"context"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
)

// handshake is what Run asks the Bot API before it receives by polling.
var handshake = []string{"getMe", "setMyCommands", "deleteWebhook"}

// pollingAdapter is an adapter of tg that receives by long polling.
func pollingAdapter(t *testing.T, tg *telegramtest.Server) *telegram.Adapter {
	t.Helper()
	ad, err := telegram.New(telegram.Config{Token: telegramtest.Token, APIURL: tg.URL,
		AllowedUsers: []int64{alice.ID}, PollTimeout: time.Second}, coretest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	return ad
}

// Issue 25: Prepare asks the Bot API what Run needs before there is an
// engine (serve calls it while the store opens), and the Run that follows
// does not ask again; a Run without a Prepare before it asks itself.
func TestPreparedAdapterAsksTelegramOnceBeforeItHasAnEngine(t *testing.T) {
	tg := telegramtest.New(t)
	ad := pollingAdapter(t, tg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ad.Prepare(ctx)
	ad.Prepare(ctx) // a second call adds nothing
	waitFor(t, 10*time.Second, "the handshake before any engine exists", func() bool {
		for _, m := range handshake {
			if len(tg.CallsTo(m, 0)) == 0 {
				return false
			}
		}
		return true
	})

	base := enginetest.New(t)
	eng := enginetest.Engine(t, enginetest.Config(), base.Deps(t, ad.Sender()))
	run := func() {
		t.Helper()
		polls := len(tg.PollStarts())
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- ad.Run(rctx, eng) }()
		waitFor(t, 10*time.Second, "a long poll", func() bool { return len(tg.PollStarts()) > polls })
		stop()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	run()
	for _, m := range handshake {
		if n := len(tg.CallsTo(m, 0)); n != 1 {
			t.Errorf("%s was called %d times by Prepare and the Run after it; want once", m, n)
		}
	}
	// A Run with no Prepare before it (the lease taken again) settles the
	// bot itself, as it always did; getMe's answer is kept.
	run()
	for m, want := range map[string]int{"getMe": 1, "setMyCommands": 2, "deleteWebhook": 2} {
		if n := len(tg.CallsTo(m, 0)); n != want {
			t.Errorf("after a second Run, %s was called %d times; want %d", m, n, want)
		}
	}
	if err := ad.Close(); err != nil {
		t.Fatal(err)
	}
}

// A Prepare that could not reach Telegram leaves the handshake to Run,
// which retries until the Bot API answers.
func TestRunAfterAFailedPrepareAsksAgain(t *testing.T) {
	tg := telegramtest.New(t)
	ad := pollingAdapter(t, tg)
	tg.Outage()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ad.Prepare(ctx)
	waitFor(t, 10*time.Second, "Prepare's getMe to fail", func() bool { return len(tg.CallsTo("getMe", 0)) > 0 })
	base := enginetest.New(t)
	eng := enginetest.Engine(t, enginetest.Config(), base.Deps(t, ad.Sender()))
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, eng) }()
	tg.Restore()
	waitFor(t, 20*time.Second, "a long poll after the outage", func() bool { return len(tg.PollStarts()) > 0 })
	for _, m := range []string{"setMyCommands", "deleteWebhook"} {
		ok := 0
		for _, c := range tg.CallsTo(m, 0) {
			if c.Code == 0 || c.Code == 200 {
				ok++
			}
		}
		if ok != 1 {
			t.Errorf("%s answered %d times; want once, by Run", m, ok)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	ad.Close()
}
