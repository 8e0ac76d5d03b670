package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/llm"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/core/tools/preview"
	"github.com/opsgate/opsgate/internal/kubetest"
	"github.com/opsgate/opsgate/memory/sqlite"
)

// Figure 13 target: what a preview may add to the card's first post.
const previewAddedP99Max = 300 * time.Millisecond

// PreviewLatency is figure 13 (docs/design.md §18): for calls requests of
// resources_scale through kubernetes-mcp-server on a real control plane
// (internal/kubetest), one after another, each in a chat of its own
// through the Telegram adapter, the time from the model fake writing the
// tool call to the Bot API fake receiving the approval card's
// sendMessage, without a previewer and with one; and, with one, to the
// editMessageText that brings the preview ("replicas: 2 → 3").
func PreviewLatency(ctx context.Context, calls int) ([]Row, error) {
	if _, err := kubetest.Binaries(); err != nil {
		return nil, fmt.Errorf("bench: figure 13 needs the control plane: %w", err)
	}
	argv, err := kubetest.FindMCPServer(kubetest.KubernetesMCPServer)
	if err != nil {
		return nil, err
	}
	c, err := kubetest.StartCluster()
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	if _, err := c.TryKubectl("", "create", "namespace", "bench"); err != nil {
		return nil, err
	}
	if _, err := c.TryKubectl("", "-n", "bench", "create", "deployment", "web", "--image=registry.example/web:1", "--replicas=2"); err != nil {
		return nil, err
	}
	server := tools.ServerConfig{Name: "kube", Command: argv[0], Args: argv[1:], Env: c.Env()}
	without, with, err := cardLatencies(ctx, server, calls)
	if err != nil {
		return nil, err
	}
	added := percentile(with.card, 99) - percentile(without.card, 99)
	row := func(name string, ds []time.Duration) string {
		return fmt.Sprintf("%s p50 %.0f ms, p99 %.0f ms", name, ms(percentile(ds, 50)), ms(percentile(ds, 99)))
	}
	return []Row{{
		Figure: "13. model's tool call -> approval card posted, with and without a preview",
		Measured: fmt.Sprintf("%s; %s; %s (n=%d each)", row("without", without.card), row("with", with.card),
			row("preview shown", with.preview), calls),
		Target: fmt.Sprintf("a preview adds <= %d ms p99", previewAddedP99Max.Milliseconds()),
		Result: verdict(added <= previewAddedP99Max),
		Note: "in process: engine + Telegram adapter (production settings) + Bot API fake, kubernetes-mcp-server 0.0.67 on a " +
			"real control plane (internal/kubetest); resources_scale on a Deployment, one request at a time, each in its own chat, alternating between a stack without " +
			"a previewer and one with; " +
			"from the model fake writing the tool call (its stream held right after that chunk) to the fake receiving the card's " +
			"sendMessage, then the editMessageText that brings the preview (a resources_get through the server; the edit waits for " +
			"the adapter's 1 s minimum between edits of a chat, after the card's post)",
		Metrics: map[string]float64{
			"without_p50_ms": ms(percentile(without.card, 50)), "without_p99_ms": ms(percentile(without.card, 99)),
			"with_p50_ms": ms(percentile(with.card, 50)), "with_p99_ms": ms(percentile(with.card, 99)),
			"preview_p50_ms": ms(percentile(with.preview, 50)), "preview_p99_ms": ms(percentile(with.preview, 99)),
			"added_p99_ms": ms(added), "calls": float64(calls),
		},
	}}, nil
}

type cardTimes struct{ card, preview []time.Duration }

// cardStack is opsgate with its Telegram front and one MCP server, with a
// previewer or without.
type cardStack struct {
	tgStack  // the same parts as figures 2–3's, closed the same way
	previews bool
	clock    *tokenClock
	base     int64
}

func newCardStack(ctx context.Context, server tools.ServerConfig, users int, previews bool) (_ *cardStack, err error) {
	s := &cardStack{tgStack: tgStack{tg: telegramtest.NewServer(), llm: llmfake.NewServer()}, previews: previews, clock: newTokenClock(), base: 300_000}
	if previews {
		s.base = 400_000
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	lg := slog.New(slog.DiscardHandler)
	if s.host, err = tools.New([]tools.ServerConfig{server}, tools.WithLogger(lg)); err != nil {
		return nil, err
	}
	if s.tmp, err = os.MkdirTemp("", "opsgate-bench-"); err != nil {
		return nil, err
	}
	if s.store, err = sqlite.Open(ctx, filepath.Join(s.tmp, "opsgate.db")); err != nil {
		return nil, err
	}
	allowed := make([]int64, users)
	for i := range allowed {
		allowed[i] = s.base + int64(i)
	}
	if s.ad, err = telegram.New(telegram.Config{Token: telegramtest.Token, APIURL: s.tg.URL, AllowedUsers: allowed, FirstSendDebounce: debounce}, lg); err != nil {
		return nil, err
	}
	model, err := llm.New(llm.Config{BaseURL: s.llm.URL, APIKey: "bench-key", Model: "bench-model"})
	if err != nil {
		return nil, err
	}
	deps := core.Deps{Model: model, Tools: s.host, Store: s.store, Sender: s.ad.Sender(), Logger: lg}
	if previews {
		deps.Previewer = preview.New(s.host, nil)
	}
	if s.engine, err = core.NewEngine(core.Config{SystemPrompt: systemPrompt, DefaultToolsets: []string{"kube"}}, deps); err != nil {
		return nil, err
	}
	s.llm.SetResponder(func(req llmfake.Request) llmfake.Reply {
		key := lastUser(req)
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			// load_toolset answered: the call that needs approval.
			return llmfake.Reply{Hold: s.clock.hold(key), ToolCalls: []llmfake.ToolCall{{ID: "s1", Name: "resources_scale",
				Arguments: `{"apiVersion":"apps/v1","kind":"Deployment","name":"web","namespace":"bench","scale":3}`}}}
		}
		return llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "l1", Name: core.LoadToolsetTool,
			Arguments: `{"toolset":"kube","include_write_tools":true}`}}}
	})
	rctx, cancel := context.WithCancel(ctx)
	s.cancel, s.done = cancel, make(chan error, 1)
	go func() { s.done <- s.ad.Run(rctx, s.engine) }()
	for len(s.tg.PollStarts()) == 0 {
		if err := sleepCtx(ctx, time.Millisecond); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// one has user i ask for the scale and returns when the card (and, with a
// previewer, its preview) reached the fake, from the tool call.
func (s *cardStack) one(ctx context.Context, i int) (card, shown time.Duration, err error) {
	u := s.base + int64(i)
	key := fmt.Sprintf("figure 13, call %d: scale web to 3", i)
	s.tg.Push(s.tg.NewTextUpdate(telegramtest.PrivateChat(u), telegramtest.User(u, fmt.Sprintf("user%d", u)), key))
	c, p, err := waitCard(ctx, s.tg, u, s.previews)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: figure 13, call %d: %w", i, err)
	}
	at, ok := s.clock.get(key)
	if !ok {
		return 0, 0, fmt.Errorf("bench: figure 13, call %d: the tool call was never streamed", i)
	}
	if p.IsZero() {
		return c.Sub(at), 0, nil
	}
	return c.Sub(at), p.Sub(at), nil
}

func (s *cardStack) close() {
	s.clock.close()
	s.tgStack.close()
}

// cardLatencies runs calls requests on each of two stacks, without a
// previewer and with one, alternating, so that both meet the same machine.
// The first requests (warmUp) start the MCP servers and open the
// connections, as a deployment has long before an incident: not counted.
func cardLatencies(ctx context.Context, server tools.ServerConfig, calls int) (without, with cardTimes, err error) {
	const warmUp = 3
	a, err := newCardStack(ctx, server, calls+warmUp, false)
	if err != nil {
		return without, with, err
	}
	defer a.close()
	b, err := newCardStack(ctx, server, calls+warmUp, true)
	if err != nil {
		return without, with, err
	}
	defer b.close()
	for i := range calls + warmUp {
		ca, _, err := a.one(ctx, i)
		if err != nil {
			return without, with, err
		}
		cb, pb, err := b.one(ctx, i)
		if err != nil {
			return without, with, err
		}
		if i < warmUp {
			continue
		}
		without.card = append(without.card, ca)
		with.card = append(with.card, cb)
		with.preview = append(with.preview, pb)
	}
	return without, with, nil
}

// waitCard waits for the approval card in chat and, with previews, for
// the edit that shows its preview; it returns when the fake received each.
func waitCard(ctx context.Context, tg *telegramtest.Server, chat int64, previews bool) (card, shown time.Time, err error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, c := range tg.CallsTo("sendMessage", chat) {
			if strings.Contains(c.Params.Get("text"), "Approval needed") && card.IsZero() {
				card = c.Time
			}
		}
		if !card.IsZero() && previews {
			for _, c := range tg.CallsTo("editMessageText", chat) {
				if strings.Contains(c.Params.Get("text"), "replicas: 2 → 3") {
					return card, c.Time, nil
				}
			}
		}
		if !card.IsZero() && !previews {
			return card, time.Time{}, nil
		}
		if time.Now().After(deadline) {
			return card, shown, fmt.Errorf("no approval card%s after 30 s; calls: %+v", map[bool]string{true: " with its preview"}[previews], tg.Calls())
		}
		if err := sleepCtx(ctx, 2*time.Millisecond); err != nil {
			return card, shown, err
		}
	}
}
