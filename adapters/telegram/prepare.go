package telegram

import "context"

// prep is a Prepare under way; settled says it got as far as setting the
// commands (and, when polling, deleting a webhook), written before done
// is closed.
type prep struct {
	done    chan struct{}
	settled bool
}

// Prepare starts, in the background, what Run does before it receives and
// that needs no engine: getMe, setMyCommands and, when polling,
// deleteWebhook. serve calls it before it opens the store, so the Bot
// API's round trips and the store's opening overlap instead of following
// each other (issue 25). The next Run waits for it and does what it could
// not. A second call before that Run does nothing.
func (a *Adapter) Prepare(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.prep != nil {
		return
	}
	p := &prep{done: make(chan struct{})}
	a.prep = p
	go func() {
		defer close(p.done)
		if _, err := a.me(ctx); err != nil {
			return // Run asks again, and says why it cannot
		}
		a.settle(ctx)
		p.settled = true
	}()
}

// prepared waits for a Prepare under way and reports whether it settled
// the bot (settle), so that Run does not do it twice; false without one.
// Each Prepare serves one Run: a Run after a lost and retaken lease
// settles the bot again, as it always did.
func (a *Adapter) prepared(ctx context.Context) bool {
	a.mu.Lock()
	p := a.prep
	a.prep = nil
	a.mu.Unlock()
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return p.settled
	case <-ctx.Done():
		return false
	}
}

// settle sets the bot's commands and, when polling, deletes a webhook
// left from an earlier setup, which would make getUpdates fail. Neither
// failing stops the adapter: each is logged.
func (a *Adapter) settle(ctx context.Context) {
	a.setCommands(ctx)
	if a.cfg.WebhookURL != "" {
		return
	}
	if _, err := a.bot(ctx).MakeRequest("deleteWebhook", nil); err != nil {
		a.log.Warn("telegram: delete webhook", "err", a.classify("delete webhook", err))
	}
}
