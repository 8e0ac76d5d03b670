package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// Figure 4 targets, and the Telegram adapter's default limiter rate
// (adapters/telegram/config.go), which the figure's analysis needs.
const (
	loadRatioMax = 1.2
	loadRSSMaxMB = 200
	loadCPUMax   = 1.0 // cores
	adapterRate  = 25  // calls/s
)

// LoadOptions size figure 4. The zero value of every field means its default.
type LoadOptions struct {
	// Conversations is the number of chats talking to the bot at once
	// (default 1000); Chunks the tokens of each reply (default 100),
	// streamed at 100 tokens/s.
	Conversations, Chunks int
	// Global and PerChat are the fake Bot API's budget in calls per second
	// (default 30 and 1, Telegram's limits).
	Global, PerChat int
	// Replicated runs two replicas on one throw-away PostgreSQL instead of
	// one on SQLite.
	Replicated bool
}

func (o *LoadOptions) defaults() {
	if o.Conversations == 0 {
		o.Conversations = 1000
	}
	if o.Chunks == 0 {
		o.Chunks = 100
	}
	if o.Global == 0 {
		o.Global = 30
	}
	if o.PerChat == 0 {
		o.PerChat = 1
	}
}

// loadScript is the load: one question per chat and the answer to it.
type loadScript struct {
	users []int64
	texts map[string]string // question -> answer
	want  map[int64]string  // chat -> its final text
}

func newLoadScript(base int64, opt LoadOptions) *loadScript {
	s := &loadScript{texts: map[string]string{}, want: map[int64]string{}}
	for i := range opt.Conversations {
		u := base + int64(i)
		s.users = append(s.users, u)
		s.texts[loadMsg(i)] = replyText(fmt.Sprint(i), opt.Chunks)
		s.want[u] = s.texts[loadMsg(i)]
	}
	return s
}

func loadMsg(i int) string { return fmt.Sprintf("figure 4, chat %d: is checkout healthy?", i) }

func (s *loadScript) respond(req llmfake.Request) llmfake.Reply {
	return llmfake.Reply{Text: s.texts[lastUser(req)], TokenDelay: tokenDelay}
}

// push queues every question at once and returns when it did.
func (s *loadScript) push(tg *telegramtest.Server) time.Time {
	ups := make([]tgbotapi.Update, len(s.users))
	for i, u := range s.users {
		ups[i] = tg.NewTextUpdate(telegramtest.PrivateChat(u), telegramtest.User(u, fmt.Sprintf("user%d", u)), loadMsg(i))
	}
	t0 := time.Now()
	tg.Push(ups...)
	return t0
}

// Load is figure 4: the real binary (`opsgate serve`, in a child process so
// that its memory and CPU are its own) serving Conversations private chats
// on one bot at once, each asking one question whose answer streams
// Chunks tokens, against the Bot API fake enforcing Telegram's budget
// (Global calls/s, PerChat calls/s per chat, 429 with retry_after beyond).
// The fakes of Telegram and of the model run in this process.
func Load(ctx context.Context, bin *binary, opt LoadOptions) ([]Row, error) {
	opt.defaults()
	r, err := runLoad(ctx, bin, opt)
	if err != nil {
		return nil, err
	}
	rows := r.rows()
	// Again with two replicas sharing one PostgreSQL and the bot token.
	opt.Replicated = true
	if r, err = runLoad(ctx, bin, opt); err != nil {
		return nil, fmt.Errorf("two replicas on PostgreSQL: %w", err)
	}
	return append(rows, r.rows()...), nil
}

func runLoad(ctx context.Context, bin *binary, opt LoadOptions) (*loadRun, error) {
	path, err := bin.get(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "opsgate-bench-load-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tg := telegramtest.NewServer()
	defer tg.Close()
	model := llmfake.NewServer()
	defer model.Close()
	script := newLoadScript(400_000, opt)
	model.SetResponder(script.respond)
	cfg, err := writeServeConfig(dir, model.URL, tg.URL, script.users)
	if err != nil {
		return nil, err
	}
	if opt.Replicated {
		cluster, err := pgtest.StartDurable()
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL: %w", err)
		}
		defer cluster.Close()
		if err := useStore(cfg, cluster.URL("postgres")); err != nil {
			return nil, err
		}
	}
	p, err := startServe(path, cfg)
	if err != nil {
		return nil, err
	}
	defer p.kill()
	if err := p.waitServing(20 * time.Second); err != nil {
		return nil, err
	}
	if opt.Replicated {
		// The second replica stands by for the poller; it takes the
		// conversations handed to it.
		p2, err := startServe(path, cfg)
		if err != nil {
			return nil, err
		}
		defer p2.kill()
		if err := waitLine(p2, "standing by", 30*time.Second); err != nil {
			return nil, err
		}
	}
	for len(tg.PollStarts()) == 0 {
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return nil, err
		}
	}
	// The budget starts now: the adapter's start-up calls name no chat.
	tg.SetBudget(telegramtest.Budget{Global: opt.Global, PerChat: opt.PerChat})
	pid := p.cmd.Process.Pid
	cpu0, err := cpuTime(pid)
	if err != nil {
		return nil, err
	}
	t0 := script.push(tg)
	if err := waitFinals(ctx, tg, script.want, loadTimeout(opt)); err != nil {
		return nil, fmt.Errorf("%w\nopsgate log:\n%s", err, p.log())
	}
	wall := time.Since(t0)
	cpu1, err := cpuTime(pid)
	if err != nil {
		return nil, err
	}
	_, hwm, err := memKB(pid)
	if err != nil {
		return nil, err
	}
	code, err := p.stop(45 * time.Second)
	if err != nil {
		return nil, err
	}
	r := &loadRun{opt: opt, cpu: cpu1 - cpu0, wall: wall, hwmKB: hwm, code: code, warnings: p.warnings()}
	if ru := p.rusage(); ru != nil {
		r.exitRSSKB = ru.Maxrss // KiB on Linux
	}
	r.observe(tg, model, script, t0)
	return r, nil
}

// loadTimeout gives up well after any plausible result.
func loadTimeout(opt LoadOptions) time.Duration {
	return 5*time.Duration(float64(opt.Conversations)/float64(opt.Global)*float64(time.Second)) + time.Minute
}
