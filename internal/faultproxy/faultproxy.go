// Package faultproxy is a TCP proxy for fault tests: it forwards every
// connection to a target, and on demand turns into a black hole that
// stops moving bytes in both directions without closing anything, the way
// a network path that silently drops packets looks to both ends. When the
// hole closes, what was held is delivered (as TCP retransmission would)
// and forwarding goes on. Connections opened during the hole are accepted
// and then held the same way.
package faultproxy

import (
	"fmt"
	"net"
	"strconv"
	"sync"
)

// Proxy forwards connections from its listener to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	open   chan struct{} // closed while forwarding; replaced by a blackhole
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a free port of 127.0.0.1 and forwards to target
// (host:port).
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{ln: ln, target: target, open: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(p.open)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the port the proxy listens on.
func (p *Proxy) Port() int {
	_, port, _ := net.SplitHostPort(p.Addr())
	n, _ := strconv.Atoi(port)
	return n
}

// Blackhole stops forwarding: bytes already read are held, nothing more is
// written either way, no connection is closed.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default: // already a black hole
	}
}

// Resume forwards again, starting with what was held.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.Resume()
	p.ln.Close()
	p.wg.Wait()
}

// gate returns the channel that is closed while the proxy forwards.
func (p *Proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}

// wait blocks while the proxy is a black hole.
func (p *Proxy) wait() { <-p.gate() }

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// serve connects c to the target once the proxy forwards (a connection
// made during a black hole sees an open socket and no answer) and copies
// both ways until either side ends.
func (p *Proxy) serve(c net.Conn) {
	defer p.untrack(c)
	p.wait()
	t, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(t) {
		return
	}
	defer p.untrack(t)
	done := make(chan struct{}, 2)
	go func() { p.copy(t, c); done <- struct{}{} }()
	go func() { p.copy(c, t); done <- struct{}{} }()
	<-done
	// One side ended: the other learns it (after any black hole), as
	// through a real path.
	c.Close()
	t.Close()
	<-done
}

// copy forwards src to dst a chunk at a time, holding each chunk (and the
// end of src) while the proxy is a black hole.
func (p *Proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			p.wait() // the end, too, waits for the path to carry it
			return
		}
	}
}
