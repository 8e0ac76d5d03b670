package discord_test

import (
	"strings"
	"testing"
	"time"
)

// Health follows the gateway: healthy once READY, failing with the reason
// as soon as the connection drops, healthy again once RESUMED. The
// adapter waits at least a second before it reconnects, which leaves the
// failing state long enough to be seen.
func TestHealthFollowsGateway(t *testing.T) {
	s := newStack(t)
	var detail string
	health := func(want bool) func() bool {
		return func() bool {
			var ok bool
			ok, detail = s.ad.Health()
			return ok == want
		}
	}
	if !s.fake.Wait(10*time.Second, health(true)) || !strings.HasPrefix(detail, "gateway ok for ") {
		t.Fatalf("not healthy after READY: %q", detail)
	}
	resumes := s.fake.Resumes()
	s.fake.Drop()
	deadline := time.Now().Add(10 * time.Second)
	for !health(false)() {
		if time.Now().After(deadline) {
			t.Fatal("still healthy after the connection dropped")
		}
		time.Sleep(time.Millisecond)
	}
	if !strings.HasPrefix(detail, "gateway failing for ") {
		t.Errorf("detail while reconnecting = %q", detail)
	}
	if !s.fake.Wait(20*time.Second, func() bool { return s.fake.Resumes() > resumes && health(true)() }) {
		t.Fatalf("not healthy after resuming: %q", detail)
	}
}
