package faultproxy

import (
	"bufio"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// echo serves line echo on a free port.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string, within time.Duration) error {
	t.Helper()
	if _, err := c.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(within))
	got, err := r.ReadString('\n')
	if err == nil && got != line {
		t.Fatalf("echoed %q, want %q", got, line)
	}
	return err
}

// A black hole holds bytes both ways without closing the connection, holds
// new connections too, and delivers everything once it ends.
func TestBlackholeHoldsThenDelivers(t *testing.T) {
	p, err := Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if err := roundTrip(t, c, r, "one\n", 5*time.Second); err != nil {
		t.Fatalf("before the black hole: %v", err)
	}

	p.Blackhole()
	if err := roundTrip(t, c, r, "two\n", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("through the black hole: %v, want a read timeout", err)
	}
	late, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("a connection during the black hole is refused: %v", err)
	}
	defer late.Close()
	lr := bufio.NewReader(late)
	if err := roundTrip(t, late, lr, "three\n", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a new connection through the black hole: %v, want a read timeout", err)
	}

	p.Resume()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "two\n" {
		t.Fatalf("after the black hole: %q, %v; want the held line", got, err)
	}
	late.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := lr.ReadString('\n'); err != nil || got != "three\n" {
		t.Fatalf("the late connection after the black hole: %q, %v; want its held line", got, err)
	}
	if err := roundTrip(t, c, r, "four\n", 5*time.Second); err != nil {
		t.Fatalf("after the black hole: %v", err)
	}
}
