package redact

import (
	"sync"
	"testing"
)

// A Redactor is immutable: one is shared by every goroutine that redacts.
func TestRedactorIsSafeForConcurrentUse(t *testing.T) {
	r := opsgateRedactor(t)
	d := toolResultDoc()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 10 {
				s := r.Stream()
				got := s.Write(d.text[:i*50]) + s.Write(d.text[i*50:]) + s.Flush()
				if got != d.want || r.String(d.text) != d.want {
					t.Errorf("concurrent redaction differs:\n%s", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A component that was never handed a Redactor still does not leak.
func TestNilRedactorUsesTheBuiltInDetectors(t *testing.T) {
	var r *Redactor
	d := toolResultDoc()
	if got := r.String(d.text); got != d.want {
		t.Fatalf("nil Redactor:\n%s", got)
	}
	s := r.Stream()
	if got := s.Write(d.text) + s.Flush(); got != d.want {
		t.Fatalf("nil Redactor's Stream:\n%s", got)
	}
}
