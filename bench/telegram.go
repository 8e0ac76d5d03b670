package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/llm"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// tgStack is opsgate with its Telegram front, in this process, wired as
// cmd/opsgate wires it: the adapter with its production settings (1 s
// between edits, 300 ms first-send debounce, a 25 calls/s limiter) polling
// the Bot API fake, the engine over SQLite, the model fake, and no MCP
// servers (the tools do not matter to rendering).
type tgStack struct {
	tg     *telegramtest.Server
	llm    *llmfake.Server
	host   *tools.Host
	store  *sqlite.Store
	engine *core.Engine
	ad     *telegram.Adapter
	tmp    string
	cancel context.CancelFunc
	done   chan error
}

// debounce is the adapter's first-send debounce, which figure 2 subtracts.
const debounce = 300 * time.Millisecond

// newTGStack starts a stack whose adapter allows the users allowed; display,
// when set, is the engine's core.Deps.Display (cmd/opsgate's redactor).
func newTGStack(allowed []int64, display func([]core.Event, core.Event) []core.Event) (_ *tgStack, err error) {
	s := &tgStack{tg: telegramtest.NewServer(), llm: llmfake.NewServer()}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	lg := slog.New(slog.DiscardHandler)
	if s.host, err = tools.New(nil, tools.WithLogger(lg)); err != nil {
		return nil, err
	}
	if s.tmp, err = os.MkdirTemp("", "opsgate-bench-"); err != nil {
		return nil, err
	}
	if s.store, err = sqlite.Open(context.Background(), filepath.Join(s.tmp, "opsgate.db")); err != nil {
		return nil, err
	}
	s.ad, err = telegram.New(telegram.Config{
		Token: telegramtest.Token, APIURL: s.tg.URL, AllowedUsers: allowed, FirstSendDebounce: debounce,
	}, lg)
	if err != nil {
		return nil, err
	}
	model, err := llm.New(llm.Config{BaseURL: s.llm.URL, APIKey: "bench-key", Model: "bench-model"})
	if err != nil {
		return nil, err
	}
	// Memory is on, as serve's defaults have it.
	s.engine, err = core.NewEngine(core.Config{SystemPrompt: systemPrompt, DefaultToolsets: []string{}, MemoryEnabled: true},
		core.Deps{Model: model, Tools: s.host, Store: s.store, Sender: s.ad.Sender(), Logger: lg, Display: display})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	go func() { s.done <- s.ad.Run(ctx, s.engine) }()
	return s, s.waitPolling(10 * time.Second)
}

// waitPolling waits until the adapter's first getUpdates arrives.
func (s *tgStack) waitPolling(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for len(s.tg.PollStarts()) == 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: the Telegram adapter did not start polling in %s", timeout)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// say sends text from user in the user's private chat (whose id is the
// user's).
func (s *tgStack) say(user int64, text string) {
	s.tg.Push(s.tg.NewTextUpdate(telegramtest.PrivateChat(user), telegramtest.User(user, fmt.Sprintf("user%d", user)), text))
}

// waitFinals waits until every chat of want shows exactly its final text,
// without buttons, in one message.
func (s *tgStack) waitFinals(ctx context.Context, want map[int64]string, timeout time.Duration) error {
	return waitFinals(ctx, s.tg, want, timeout)
}

func (s *tgStack) close() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	if s.engine != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = s.engine.Shutdown(ctx)
		cancel()
	}
	if s.ad != nil {
		_ = s.ad.Close()
	}
	if s.host != nil {
		_ = s.host.Close()
	}
	if s.store != nil {
		_ = s.store.Close()
	}
	s.llm.Close()
	s.tg.Close()
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
	}
}

// final reports whether a chat shows exactly text: one message, no buttons.
func final(msgs []telegramtest.Message, text string) bool {
	return len(msgs) == 1 && msgs[0].Visible == text && len(msgs[0].Buttons) == 0
}

// waitFinals waits until every chat of want shows its final text.
func waitFinals(ctx context.Context, tg *telegramtest.Server, want map[int64]string, timeout time.Duration) error {
	return waitShown(ctx, tg, want, 1, timeout)
}

// waitShown waits until every chat of want shows n messages, the last its
// final text without buttons.
func waitShown(ctx context.Context, tg *telegramtest.Server, want map[int64]string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	// Looking at a thousand chats is work taken from the two cores the
	// process under test runs on: look less often.
	every := 20 * time.Millisecond
	if len(want) > 100 {
		every = 250 * time.Millisecond
	}
	pending := make(map[int64]string, len(want))
	for c, t := range want {
		pending[c] = t
	}
	for {
		for c, t := range pending {
			if msgs := tg.Messages(c); len(msgs) == n && final(msgs[n-1:], t) {
				delete(pending, c)
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for c := range pending {
				return fmt.Errorf("bench: %d of %d chats without their final text after %s; chat %d shows %+v",
					len(pending), len(want), timeout, c, tg.Messages(c))
			}
		}
		if err := sleepCtx(ctx, every); err != nil {
			return err
		}
	}
}

// replyText is a model reply of n streamed chunks (llmfake sends a word per
// chunk), tagged with id so that every conversation's final text differs.
// The words are common English words, one cl100k token each.
func replyText(id string, n int) string {
	vocab := strings.Fields("the checkout pods are healthy and the last deploy rolled out on all three nodes " +
		"with no new errors in the past hour so the alert was a short spike in latency from the upstream cache")
	var b strings.Builder
	b.WriteString("Reply " + id + ":")
	for i := range n - 2 {
		b.WriteString(" " + vocab[i%len(vocab)])
	}
	return b.String()
}

// tokenClock notes when the model fake wrote each reply's first token.
// llmfake holds a stream right after its first token chunk (written and
// flushed) until Hold yields; a send on an unbuffered Hold completes at
// exactly that moment.
type tokenClock struct {
	mu   sync.Mutex
	at   map[string]time.Time
	done chan struct{}
}

func newTokenClock() *tokenClock {
	return &tokenClock{at: map[string]time.Time{}, done: make(chan struct{})}
}

// hold returns the Hold channel of the reply keyed key.
func (c *tokenClock) hold(key string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		select {
		case ch <- struct{}{}:
			now := time.Now()
			c.mu.Lock()
			c.at[key] = now
			c.mu.Unlock()
		case <-c.done:
		}
	}()
	return ch
}

func (c *tokenClock) get(key string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.at[key]
	return t, ok
}

func (c *tokenClock) close() { close(c.done) }

// scriptedChats is a Telegram stack whose chats each ask question(i) and get
// their own reply of chunks tokens, streamed at tokenDelay; clock records
// when each reply's first token left the model.
type scriptedChats struct {
	*tgStack
	users []int64
	texts map[string]string // question -> reply
	want  map[int64]string  // chat -> reply
	clock *tokenClock
}

func newScriptedChats(base int64, n, chunks int, question func(int) string) (*scriptedChats, error) {
	c := &scriptedChats{users: make([]int64, n), texts: map[string]string{}, want: map[int64]string{}}
	for i := range c.users {
		c.users[i] = base + int64(i)
		c.texts[question(i)] = replyText(fmt.Sprint(i), chunks)
		c.want[c.users[i]] = c.texts[question(i)]
	}
	s, err := newTGStack(c.users, nil)
	if err != nil {
		return nil, err
	}
	c.tgStack, c.clock = s, newTokenClock()
	s.llm.SetResponder(func(req llmfake.Request) llmfake.Reply {
		key := lastUser(req)
		return llmfake.Reply{Text: c.texts[key], TokenDelay: tokenDelay, Hold: c.clock.hold(key)}
	})
	return c, nil
}

func (c *scriptedChats) close() {
	c.clock.close()
	c.tgStack.close()
}
