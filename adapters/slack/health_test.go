package slack_test

import (
	"strings"
	"testing"
)

// In Socket Mode, Health follows the websocket: healthy when connected,
// failing while Slack's reconnection is held up, healthy once back.
func TestHealthFollowsSocket(t *testing.T) {
	s := newStack(t)
	healthy := func(want bool, wantDetail string) {
		t.Helper()
		var detail string
		s.fake.Eventually(t, "Health "+wantDetail, func() bool {
			var ok bool
			ok, detail = s.a.Health()
			return ok == want && strings.Contains(detail, wantDetail)
		})
	}
	healthy(true, "socket mode ok for ")
	release := s.fake.Hold("apps.connections.open")
	s.fake.Disconnect(t)
	healthy(false, "socket mode failing for ")
	release()
	healthy(true, "socket mode ok for ")
	s.fake.WaitConnected(t)
}

// In HTTP mode there is no connection of ours: healthy once auth.test
// accepted the bot token.
func TestHealthHTTPMode(t *testing.T) {
	s := newStack(t, httpMode)
	s.fake.Eventually(t, "a healthy adapter", func() bool { ok, _ := s.a.Health(); return ok })
	if _, d := s.a.Health(); !strings.HasPrefix(d, "auth.test ok for ") {
		t.Errorf("detail = %q", d)
	}
}
