package telegram_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest"
)

// keepingEngine is a recordingEngine that keeps conversation keys, as
// *core.Engine does in its store, and counts the adapter's reads of them.
type keepingEngine struct {
	recordingEngine
	kmu   sync.Mutex
	keys  []string
	reads []string // prefixes ConversationKeys was asked for
}

func (e *keepingEngine) StartConversation(_ context.Context, key string) error {
	e.kmu.Lock()
	defer e.kmu.Unlock()
	e.keys = append(e.keys, key)
	return nil
}

func (e *keepingEngine) ConversationKeys(_ context.Context, prefix string) ([]string, error) {
	e.kmu.Lock()
	defer e.kmu.Unlock()
	e.reads = append(e.reads, prefix)
	var out []string
	for _, k := range e.keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out, nil
}

func (e *keepingEngine) readCount() []string {
	e.kmu.Lock()
	defer e.kmu.Unlock()
	return append([]string(nil), e.reads...)
}

// runOnce runs ad with eng until the returned stop is called.
func runOnce(t *testing.T, ad *telegram.Adapter, eng telegram.Engine) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, eng) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func newAdapter(t *testing.T, tg *telegramtest.Server) *telegram.Adapter {
	t.Helper()
	ad, err := telegram.New(telegram.Config{
		Token: telegramtest.Token, APIURL: tg.URL, AllowedUsers: []int64{alice.ID},
		PollTimeout: time.Second, MinEditInterval: 20 * time.Millisecond, FirstSendDebounce: 10 * time.Millisecond,
	}, coretest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ad.Close() })
	return ad
}

// A chat's first message since the start costs no store read of its own
// while polling: the poller reads once, for the first chat it does not
// know, which chats a /new moved, and a chat moved by a /new before the
// start (here: on another replica) continues its new conversation (issue 25: no store round trip on the way
// from message to model that round 1 did not make).
func TestNewChatsNeedNoStoreReadWhilePolling(t *testing.T) {
	tg := telegramtest.New(t)
	eng := &keepingEngine{keys: []string{
		telegram.ConvKey(telegramtest.BotID, alice.ID, "77"),
		telegram.ConvKey(telegramtest.BotID, alice.ID, "9"),
		telegram.ConvKey(telegramtest.BotID, -100, ""),
		telegram.ConvKey(telegramtest.BotID, -100, "r5"), // replies to an incident's root, not a /new
	}}
	ad := newAdapter(t, tg)
	stop := runOnce(t, ad, eng)
	defer stop()
	tg.SendText(telegramtest.PrivateChat(alice.ID), alice, "how is web?")
	tg.SendText(telegramtest.GroupChat(-100), alice, "@opsgate_bot and the database?")
	last := tg.SendText(telegramtest.GroupChat(-200), alice, "@opsgate_bot and the cache?")
	settle(t, tg, last)

	got := eng.inbound()
	want := []string{
		telegram.ConvKey(telegramtest.BotID, alice.ID, "77"),
		telegram.ConvKey(telegramtest.BotID, -100, ""),
		telegram.ConvKey(telegramtest.BotID, -200, ""),
	}
	if len(got) != len(want) {
		t.Fatalf("handed %d messages, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].ConvKey != want[i] {
			t.Errorf("message %d went to %q, want %q", i, got[i].ConvKey, want[i])
		}
	}
	reads := eng.readCount()
	if len(reads) != 1 || reads[0] != fmt.Sprintf("telegram:%d:", telegramtest.BotID) {
		t.Errorf("ConversationKeys was asked %q; want one read of the bot's keys, none per chat", reads)
	}
}

// When the poller's lease is taken again (Run again, after another replica
// polled meanwhile), what the first Run knew about a chat is dropped: a
// /new the other replica handled is followed.
func TestPollingAgainFollowsANewFromAnotherReplica(t *testing.T) {
	tg := telegramtest.New(t)
	eng := &keepingEngine{keys: []string{telegram.ConvKey(telegramtest.BotID, alice.ID, "77")}}
	ad := newAdapter(t, tg)
	chat := telegramtest.PrivateChat(alice.ID)

	stop := runOnce(t, ad, eng)
	settle(t, tg, tg.SendText(chat, alice, "first"))
	stop()
	// Another replica held the lease and handled a /new.
	if err := eng.StartConversation(context.Background(), telegram.ConvKey(telegramtest.BotID, alice.ID, "99")); err != nil {
		t.Fatal(err)
	}
	stop = runOnce(t, ad, eng)
	defer stop()
	settle(t, tg, tg.SendText(chat, alice, "second"))

	got := eng.inbound()
	if len(got) != 2 {
		t.Fatalf("handed %+v, want two messages", got)
	}
	if want := telegram.ConvKey(telegramtest.BotID, alice.ID, "77"); got[0].ConvKey != want {
		t.Errorf("first message went to %q, want %q", got[0].ConvKey, want)
	}
	if want := telegram.ConvKey(telegramtest.BotID, alice.ID, "99"); got[1].ConvKey != want {
		t.Errorf("after the other replica's /new the message went to %q, want %q", got[1].ConvKey, want)
	}
}
