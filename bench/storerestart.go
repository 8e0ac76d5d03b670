package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// The docs/design.md §16 bounds of figure 9's second row: every conversation
// answered within this long of the store's return, and none twice.
const storeReturnMax = 30 * time.Second

// storeRestartWatch is how long after the last answer duplicates are
// looked for: past the hold lapse (15 s) and a sweep (3 s), by which a
// replica that wrongly took up another's run has answered again.
const storeRestartWatch = 20 * time.Second

// StoreRestart is figure 9's second row: two `opsgate serve` replicas of
// the real binary on a throw-away PostgreSQL with the Telegram adapter;
// while conversations answers stream (each 40 chunks, 100 ms apart),
// PostgreSQL restarts (pg_ctl -m fast). Measured: the seconds from the
// store's return until every conversation shows its whole answer, and the
// answers shown more than once (docs/design.md §16: a message is answered once).
func StoreRestart(ctx context.Context, bin *binary, conversations int) ([]Row, error) {
	r, err := newPGReplicas(ctx, bin)
	if err != nil {
		return nil, err
	}
	defer r.close()
	path, cluster, tg, model := r.path, r.cluster, r.tg, r.model
	const base = 9000
	question := func(i int) string { return fmt.Sprintf("figure 9, chat %d: is payments healthy?", i) }
	answer := func(i int) string { return replyText(fmt.Sprint(i), 40) + fmt.Sprintf(" END-%d", i) }
	model.SetResponder(func(req llmfake.Request) llmfake.Reply {
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if m := req.Messages[i]; m.Role == "user" {
				var n int
				if _, err := fmt.Sscanf(m.Content, "figure 9, chat %d:", &n); err == nil {
					return llmfake.Reply{Text: answer(n), TokenDelay: 100 * time.Millisecond}
				}
				break
			}
		}
		return llmfake.Reply{Text: "A title"}
	})
	users := make([]int64, conversations)
	for i := range users {
		users[i] = base + int64(i)
	}
	cfg, err := r.config(users)
	if err != nil {
		return nil, err
	}

	a, err := startServe(path, cfg)
	if err != nil {
		return nil, err
	}
	defer a.kill()
	if err := waitLine(a, "receiving updates by long polling", 30*time.Second); err != nil {
		return nil, err
	}
	sb, err := startServe(path, cfg)
	if err != nil {
		return nil, err
	}
	defer sb.kill()
	if err := waitLine(sb, "standing by", 30*time.Second); err != nil {
		return nil, err
	}

	for i, u := range users {
		tg.Push(tg.NewTextUpdate(telegramtest.PrivateChat(u), telegramtest.User(u, fmt.Sprintf("user%d", i)), question(int(u-base))))
	}
	shows := func(u int64, text string) int {
		n := 0
		for _, m := range tg.Messages(u) {
			n += strings.Count(m.Visible, text)
		}
		return n
	}
	// Every answer streams when the store goes.
	if err := waitAll(ctx, users, 60*time.Second, func(u int64) bool { return shows(u, fmt.Sprintf("Reply %d:", u-base)) > 0 }); err != nil {
		return nil, fmt.Errorf("bench: figure 9, the answers before the restart: %w", err)
	}
	if err := cluster.Stop(); err != nil {
		return nil, err
	}
	if err := cluster.Restart(); err != nil {
		return nil, err
	}
	back := time.Now()
	done := func(u int64) bool { return shows(u, fmt.Sprintf("END-%d", u-base)) > 0 }
	werr := waitAll(ctx, users, 120*time.Second, done)
	took := time.Since(back)
	if err := sleepCtx(ctx, storeRestartWatch); err != nil {
		return nil, err
	}
	answered, dups, errs := 0, 0, 0
	for _, u := range users {
		n := shows(u, fmt.Sprintf("END-%d", u-base))
		if n > 0 {
			answered++
		}
		if n > 1 {
			dups += n - 1
		}
		if shows(u, "⚠️") > 0 {
			errs++
		}
	}
	measured := fmt.Sprintf("%d of %d answered %.1f s after the store returned; %d duplicates, %d errors", answered, conversations, took.Seconds(), dups, errs)
	if werr != nil {
		measured = fmt.Sprintf("%d of %d answered after %.0f s; %d duplicates, %d errors", answered, conversations, took.Seconds(), dups, errs)
	}
	return []Row{{
		Figure:   "9. answers after a PostgreSQL restart",
		Measured: measured,
		Target:   fmt.Sprintf("all within %s, 0 duplicates", storeReturnMax),
		Result:   verdict(werr == nil && took <= storeReturnMax && dups == 0),
		Note: fmt.Sprintf("two replicas of the real binary on one PostgreSQL, Telegram fake, %d conversations streaming (40 chunks, 100 ms apart) when PostgreSQL restarts (pg_ctl -m fast); "+
			"from the restarted server accepting connections until every chat shows its whole answer; duplicates are whole answers shown more than once, counted %s after the last", conversations, storeRestartWatch),
		Metrics: map[string]float64{"answered_s": took.Seconds(), "answered": float64(answered), "duplicates": float64(dups), "errors": float64(errs)},
	}}, nil
}

// waitAll waits until cond holds for every user's chat.
func waitAll(ctx context.Context, users []int64, timeout time.Duration, cond func(int64) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		n := 0
		for _, u := range users {
			if cond(u) {
				n++
			}
		}
		if n == len(users) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d chats after %s", n, len(users), timeout)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}
