package postgres_test

import (
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/internal/pgtest"
)

// pausingProxy forwards TCP to a server; while paused it forwards nothing
// and closes nothing, as a path that drops packets without a FIN does
// (TCP delivers what was sent once the path is back).
type pausingProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
}

func newPausingProxy(t *testing.T, target string) *pausingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pausingProxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	t.Cleanup(func() { p.pause(false); ln.Close() })
	go p.serve()
	return p
}

func (p *pausingProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

func (p *pausingProxy) pipe(from, to net.Conn) {
	defer to.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		p.mu.Lock()
		for p.paused {
			p.cond.Wait()
		}
		p.mu.Unlock()
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				from.Close()
			}
			return
		}
	}
}

func (p *pausingProxy) pause(on bool) {
	p.mu.Lock()
	p.paused = on
	p.mu.Unlock()
	p.cond.Broadcast()
}

// A replica whose path to PostgreSQL drops everything for 20 s (no FIN)
// says it cannot show it is alive meanwhile, and is alive again once the
// path is back; the other replica never claims its conversation, during
// or after (DESIGN §16).
func TestNoTakeUpOverASilentPathFor20s(t *testing.T) {
	direct := pgtest.DB(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newPausingProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
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
	proxy.pause(true)
	paused := time.Now()
	waitAlive(t, ca, false, 10*time.Second)
	noClaimByB(time.Until(paused.Add(20 * time.Second)))
	proxy.pause(false)
	waitAlive(t, ca, true, 15*time.Second)
	noClaimByB(20 * time.Second)
}
