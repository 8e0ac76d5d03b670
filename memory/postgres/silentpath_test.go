package postgres_test

import (
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/opsgate/opsgate/internal/faultproxy"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// A replica whose path to PostgreSQL drops everything for 20 s (no FIN)
// says it cannot show it is alive meanwhile, and is alive again once the
// path is back; the other replica never claims its conversation, during
// or after (docs/design.md §16).
func TestNoTakeUpOverASilentPathFor20s(t *testing.T) {
	direct := pgtest.DB(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	// A path that drops packets without a FIN: nothing forwarded, nothing
	// closed, delivered once the path is back.
	proxy, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	u.Host = proxy.Addr()
	a, b := open(t, u.String()), open(t, direct)
	log := slog.New(slog.DiscardHandler)
	ca, closeA := a.Coordinator("replica-a", log)
	defer closeA()
	cb, closeB := b.Coordinator("replica-b", log)
	defer closeB()
	ctx := t.Context()
	if held, err := ca.Claim(ctx, "conv-1"); err != nil || !held {
		t.Fatalf("a's Claim = %v, %v", held, err)
	}
	time.Sleep(16 * time.Second) // b's grace
	noClaimByB := func(d time.Duration) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			if held, err := cb.Claim(ctx, "conv-1"); err == nil && held {
				t.Fatal("b claimed the conversation of a, which is alive behind a silent path")
			}
		}
	}
	proxy.Blackhole()
	paused := time.Now()
	waitAlive(t, ca, false, 10*time.Second)
	noClaimByB(time.Until(paused.Add(20 * time.Second)))
	proxy.Resume()
	waitAlive(t, ca, true, 15*time.Second)
	noClaimByB(20 * time.Second)
}
