package telegram_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
)

// recordingEngine records what the adapter hands over; Status reports a
// fixed state.
type recordingEngine struct {
	mu      sync.Mutex
	handled []core.Inbound
	stopped []string
	status  core.Status
}

func (e *recordingEngine) Handle(_ context.Context, in core.Inbound) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handled = append(e.handled, in)
	return nil
}

func (e *recordingEngine) Stop(_ context.Context, key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = append(e.stopped, key)
	return false
}

func (e *recordingEngine) Decide(context.Context, core.Decision) (core.Approval, error) {
	return core.Approval{}, core.ErrNotFound
}

func (e *recordingEngine) Status(context.Context, string) (core.Status, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.status, nil
}

func (e *recordingEngine) inbound() []core.Inbound {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]core.Inbound(nil), e.handled...)
}

func runWithEngine(t *testing.T, eng telegram.Engine) (*telegram.Adapter, *telegramtest.Server) {
	t.Helper()
	tg := telegramtest.New(t)
	ad, err := telegram.New(telegram.Config{
		Token: telegramtest.Token, APIURL: tg.URL, AllowedUsers: []int64{alice.ID},
		PollTimeout: time.Second, MinEditInterval: 20 * time.Millisecond, FirstSendDebounce: 10 * time.Millisecond,
	}, coretest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, eng) }()
	t.Cleanup(func() {
		cancel()
		<-done
		ad.Close()
	})
	return ad, tg
}

// settle waits until the adapter fetched everything queued so far.
func settle(t *testing.T, tg *telegramtest.Server, last tgbotapi.Update) {
	t.Helper()
	waitFor(t, 10*time.Second, "the updates to be handled", func() bool { return tg.Confirmed() > last.UpdateID })
}

func TestGroupAnswersOnlyMentionsCommandsAndReplies(t *testing.T) {
	eng := &recordingEngine{}
	ad, tg := runWithEngine(t, eng)
	g := telegramtest.GroupChat(-100)
	tg.SendText(g, alice, "just chatting among humans")
	tg.SendText(g, alice, "/status@other_bot")
	tg.SendText(g, alice, "hey @opsgate_bot how is web?")
	reply := tg.NewTextUpdate(g, alice, "and the database?")
	reply.Message.ReplyToMessage = &tgbotapi.Message{MessageID: 1, From: &tgbotapi.User{ID: telegramtest.BotID, IsBot: true}}
	tg.Push(reply)
	last := tg.SendText(g, alice, "/status@opsgate_bot")
	settle(t, tg, last)
	if err := ad.Sender().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := eng.inbound()
	if len(got) != 2 || got[0].Text != "hey how is web?" || got[1].Text != "and the database?" {
		t.Errorf("handed to the engine: %+v; want the mention (without it) and the reply", got)
	}
	if len(got) > 0 && got[0].ConvKey != telegram.ConvKey(telegramtest.BotID, -100, "") {
		t.Errorf("group conversation key = %q", got[0].ConvKey)
	}
	msgs := tg.Messages(-100)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Visible, "Nothing is running") {
		t.Errorf("group shows %+v, want one /status answer (the other bot's command ignored)", msgs)
	}
}

func TestCommands(t *testing.T) {
	eng := &recordingEngine{status: core.Status{PendingApprovals: []core.Approval{{Tool: "scale_deployment", Requester: core.Actor{Name: "@alice"}, ExpiresAt: time.Now()}}}}
	ad, tg := runWithEngine(t, eng)
	chat := telegramtest.PrivateChat(alice.ID)
	tg.SendText(chat, alice, "/help")
	tg.SendText(chat, alice, "/status")
	tg.SendText(chat, alice, "/stop")
	tg.SendText(chat, alice, "first question")
	tg.SendText(chat, alice, "/new")
	last := tg.SendText(chat, alice, "second question")
	settle(t, tg, last)
	if err := ad.Sender().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range tg.Messages(alice.ID) {
		texts = append(texts, m.Visible)
	}
	all := strings.Join(texts, "\n---\n")
	for _, want := range []string{"/new – start a fresh conversation", "scale_deployment waits for approval", "Nothing is running.", "Started a fresh conversation"} {
		if !strings.Contains(all, want) {
			t.Errorf("replies lack %q:\n%s", want, all)
		}
	}
	got := eng.inbound()
	if len(got) != 2 {
		t.Fatalf("engine got %+v, want the two questions", got)
	}
	if got[0].ConvKey == got[1].ConvKey || !strings.HasPrefix(got[1].ConvKey, got[0].ConvKey+":") {
		t.Errorf("/new should start a new conversation: %q then %q", got[0].ConvKey, got[1].ConvKey)
	}
	if got[0].User.ID != telegram.ActorID(alice.ID) || got[0].User.Name != "@alice" || got[0].MessageID == "" {
		t.Errorf("inbound = %+v, want alice with a message id", got[0])
	}
	if len(eng.stopped) != 2 {
		t.Errorf("Stop calls = %v, want /stop and /new to stop the old conversation", eng.stopped)
	}
	if n := len(tg.CallsTo("setMyCommands", 0)); n != 1 {
		t.Errorf("setMyCommands called %d times, want 1", n)
	}
}

func TestTypingIndicatorFailureIsHarmless(t *testing.T) {
	ad, tg := newSenderOnly(t, 20*time.Millisecond, 10*time.Millisecond)
	tg.Inject(telegramtest.Fault{Method: "sendChatAction", Code: 500, Description: "Internal Server Error", Times: 100})
	conv := telegram.ConvKey(telegramtest.BotID, alice.ID, "")
	for _, ev := range []core.Event{
		{Type: core.EventReady, ConvKey: conv, RunID: "r"},
		{Type: core.EventGenerationStart, ConvKey: conv, RunID: "r"},
	} {
		ad.Sender().Send(context.Background(), ev)
	}
	waitFor(t, 10*time.Second, "a typing indicator", func() bool { return len(tg.CallsTo("sendChatAction", alice.ID)) > 0 })
	ad.Sender().Send(context.Background(), core.Event{Type: core.EventToken, ConvKey: conv, RunID: "r", Text: "ok"})
	ad.Sender().Send(context.Background(), core.Event{Type: core.EventCompleted, ConvKey: conv, RunID: "r", Text: "ok", Status: core.RunDone})
	if err := ad.Sender().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if msgs := tg.Messages(alice.ID); len(msgs) != 1 || msgs[0].Visible != "ok" {
		t.Errorf("messages = %+v", msgs)
	}
}
