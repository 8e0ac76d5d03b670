package storetest

import (
	"testing"

	"github.com/opsgate/opsgate/core"
)

// RunLeases checks a core.Leaser: a lease is held by one holder at a time
// and free again once released. open must return stores sharing one
// database (as two processes would).
func RunLeases(t *testing.T, a, b core.Leaser) {
	ctx := t.Context()
	la, ok, err := a.TryLease(ctx, "telegram:1234")
	if err != nil || !ok {
		t.Fatalf("first TryLease = %v, %v; want held", ok, err)
	}
	if _, ok, err := b.TryLease(ctx, "telegram:1234"); err != nil || ok {
		t.Fatalf("TryLease while another holds it = %v, %v; want not held", ok, err)
	}
	lo, ok, err := b.TryLease(ctx, "discord:99")
	if err != nil || !ok {
		t.Fatalf("TryLease of another name = %v, %v; want held", ok, err)
	}
	lo.Release()
	select {
	case <-la.Lost():
		t.Fatal("a held lease reports lost")
	default:
	}
	la.Release()
	la.Release() // twice is harmless
	lb, ok, err := b.TryLease(ctx, "telegram:1234")
	if err != nil || !ok {
		t.Fatalf("TryLease after release = %v, %v; want held", ok, err)
	}
	lb.Release()
}
