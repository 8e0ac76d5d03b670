package core_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/opsgate/opsgate/core"
)

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		m    core.Measure
		want string
	}{
		{"hello", 5, core.Bytes, "hello"},
		{"hello", 5, core.Runes, "hello"},
		{"hello", 5, core.UTF16, "hello"},
		{"hello world", 8, core.Bytes, "hello…"},   // 5 bytes + 3 for "…"
		{"hello world", 8, core.Runes, "hello w…"}, // 7 runes + 1
		{"hello world", 8, core.UTF16, "hello w…"}, // 7 units + 1
		// é is 2 bytes, 1 rune, 1 unit: a byte cut never splits it.
		{"ééééé", 8, core.Bytes, "éé…"},
		{"ééééé", 5, core.Runes, "ééééé"},
		{"ééééé", 4, core.Runes, "ééé…"},
		// 😀 is 4 bytes, 1 rune, 2 UTF-16 units (a surrogate pair).
		{"😀😀😀", 3, core.Runes, "😀😀😀"},
		{"😀😀😀", 5, core.UTF16, "😀😀…"},
		{"😀😀😀", 4, core.UTF16, "😀…"},
		{"😀😀😀", 6, core.UTF16, "😀😀😀"},
		{"", 0, core.Bytes, ""},
	} {
		got := core.Truncate(tt.s, tt.n, tt.m)
		if got != tt.want {
			t.Errorf("Truncate(%q, %d, %v) = %q, want %q", tt.s, tt.n, tt.m, got, tt.want)
		}
		if tt.n >= 3 && tt.m.Len(got) > tt.n {
			t.Errorf("Truncate(%q, %d, %v) = %q measures %d, over %d", tt.s, tt.n, tt.m, got, tt.m.Len(got), tt.n)
		}
	}
}

// Whatever the measure, a cut lands on a rune boundary and the result fits.
func TestTruncateFitsOnRuneBoundaries(t *testing.T) {
	s := strings.Repeat("aé😀€", 50)
	for _, m := range []core.Measure{core.Bytes, core.Runes, core.UTF16} {
		for n := 3; n < m.Len(s)+2; n++ {
			got := core.Truncate(s, n, m)
			if !utf8.ValidString(got) || m.Len(got) > n {
				t.Fatalf("Truncate(s, %d, %v) = %q: valid %v, measures %d", n, m, got, utf8.ValidString(got), m.Len(got))
			}
			if got != s && !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
				t.Fatalf("Truncate(s, %d, %v) = %q is not a prefix of s and \"…\"", n, m, got)
			}
			// Longest: one more rune would not fit.
			if cut := strings.TrimSuffix(got, "…"); got != s && len(cut) < len(s) {
				_, size := utf8.DecodeRuneInString(s[len(cut):])
				if m.Len(s[:len(cut)+size]+"…") <= n {
					t.Fatalf("Truncate(s, %d, %v) = %q is not the longest cut", n, m, got)
				}
			}
		}
	}
}
