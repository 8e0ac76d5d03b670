package telegram

import "time"

// Health reports whether the bot receives updates, for /readyz: when
// polling, whether the last getUpdates (or, before the first one
// returned, getMe) succeeded and one did within twice the poll timeout;
// with a webhook, whether setWebhook succeeded. The detail says since
// when, and the last error while failing.
func (a *Adapter) Health() (ok bool, detail string) {
	if a.cfg.WebhookURL != "" {
		return a.link.Health(0)
	}
	// A long poll answers within PollTimeout even when nothing happens; an
	// HTTP client without a timeout could hang on a dead connection.
	return a.link.Health(2*a.cfg.PollTimeout + 15*time.Second)
}
