package telegram_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/core"
)

// Health follows the Bot API: healthy once polling, unhealthy with the
// error while Telegram answers 502, healthy again soon after it is back.
func TestHealthFollowsPolling(t *testing.T) {
	s := newStack(t)
	health := func(wantOK bool, wants ...string) {
		t.Helper()
		var detail string
		waitFor(t, 20*time.Second, "Health to be "+map[bool]string{true: "ok", false: "failing"}[wantOK], func() bool {
			var ok bool
			ok, detail = s.ad.Health()
			return ok == wantOK
		})
		for _, w := range wants {
			if !strings.Contains(detail, w) {
				t.Errorf("Health detail %q lacks %q", detail, w)
			}
		}
	}
	health(true, "polling ok for ")
	s.tg.Outage()
	health(false, "polling failing for ", "Bad Gateway")
	if strings.Contains(func() string { _, d := s.ad.Health(); return d }(), "TEST-token") {
		t.Error("the detail shows the bot token")
	}
	s.tg.Restore()
	health(true, "polling ok for ")
}

// In webhook mode the adapter is healthy once setWebhook succeeded.
func TestHealthWebhookSet(t *testing.T) {
	s := newStack(t, func(c *telegram.Config, _ *core.Config) {
		c.WebhookURL, c.WebhookSecret = "https://bot.example.com/telegram/hook", secret
	})
	waitFor(t, 10*time.Second, "a healthy webhook", func() bool { ok, _ := s.ad.Health(); return ok })
	if s.tg.Webhook().URL == "" {
		t.Error("healthy before setWebhook")
	}
	if _, d := s.ad.Health(); !strings.HasPrefix(d, "webhook ok for ") {
		t.Errorf("detail = %q", d)
	}
}
