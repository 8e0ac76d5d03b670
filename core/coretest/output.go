package coretest

import (
	"strings"
	"testing"
)

// MustInOrder checks that the wants appear in s in this order, each after
// the end of the one before: for output whose exact text around the
// expectations does not matter.
func MustInOrder(t testing.TB, s string, wants ...string) {
	t.Helper()
	rest := s
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("output lacks %q after the previous expectations; full output:\n%s", w, s)
			return
		}
		rest = rest[i+len(w):]
	}
}
