package render

import (
	"errors"
	"testing"
	"time"
)

func TestLinkHealth(t *testing.T) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := NewLink("getUpdates")
	l.now = func() time.Time { return clock }
	step := func(d time.Duration) { clock = clock.Add(d) }
	check := func(name string, maxSilence time.Duration, wantOK bool, wantDetail string) {
		t.Helper()
		ok, detail := l.Health(maxSilence)
		if ok != wantOK || detail != wantDetail {
			t.Errorf("%s: Health = %v %q, want %v %q", name, ok, detail, wantOK, wantDetail)
		}
	}
	check("new", 0, false, "getUpdates: not connected yet")
	l.Down(errors.New("connection refused"))
	step(3 * time.Second)
	l.Down(errors.New("connection reset"))
	step(1500 * time.Millisecond)
	check("never up", 0, false, "getUpdates: not connected yet, failing for 4s: connection reset")
	l.Up()
	step(10 * time.Second)
	l.Up() // stays up since the first success
	step(2 * time.Second)
	check("up", 0, true, "getUpdates ok for 12s")
	check("silent too long", time.Second, false, "getUpdates: no answer for 2s")
	check("silent within bounds", time.Minute, true, "getUpdates ok for 12s")
	l.Down(errors.New("HTTP 502: Bad Gateway"))
	step(12 * time.Second)
	l.Down(errors.New("HTTP 502: Bad Gateway")) // down since the first failure
	check("down", time.Minute, false, "getUpdates failing for 12s: HTTP 502: Bad Gateway")
	l.Up()
	check("back", time.Minute, true, "getUpdates ok for 0s")
}
