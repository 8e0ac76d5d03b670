package readiness

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The model counts as answering after a recent answer without any ping;
// otherwise a ping decides, and its result stands for pingCacheFor.
func TestModelProbe(t *testing.T) {
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var last time.Time
	pings := 0
	var pingErr error
	p := &ModelProbe{
		Ping:       func(context.Context) error { pings++; return pingErr },
		LastAnswer: func() time.Time { return last },
		Now:        func() time.Time { return clock },
	}
	check := func(name string, wantOK bool, wantPings int, wantDetail string) {
		t.Helper()
		c := p.component()
		if c.Name != "model" || c.OK != wantOK || pings != wantPings || !strings.Contains(c.Detail, wantDetail) {
			t.Errorf("%s: %+v after %d pings, want ok=%v after %d pings, detail with %q", name, c, pings, wantOK, wantPings, wantDetail)
		}
	}
	check("never answered: a ping", true, 1, "answered a ping 0s ago")
	clock = clock.Add(10 * time.Second)
	check("within the cache", true, 1, "answered a ping 10s ago")

	pingErr = errors.New("llm: GET http://127.0.0.1:1/v1/models: connection refused")
	clock = clock.Add(pingCacheFor)
	check("cache expired, endpoint down", false, 2, "a ping 0s ago failed: llm: GET http://127.0.0.1:1/v1/models: connection refused")
	clock = clock.Add(5 * time.Second)
	check("failure cached", false, 2, "ping 5s ago failed")

	last = clock.Add(-4 * time.Minute)
	check("a recent answer needs no ping", true, 2, "last answer 4m0s ago")
	clock = clock.Add(time.Minute + time.Second)
	check("the answer is too old: the cached ping decides again", false, 3, "no answer in the last 5m0s")

	pingErr = nil
	clock = clock.Add(pingCacheFor)
	check("endpoint back", true, 4, "answered a ping 0s ago")
}
