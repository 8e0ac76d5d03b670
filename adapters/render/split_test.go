package render_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opsgate/opsgate/adapters/render"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"fits", "hello world", 50, []string{"hello world"}},
		{"paragraphs", "aaaa aaaa aaaa aaaa\n\nbbbb bbbb bbbb bbbb\n\ncccc", 45, []string{"aaaa aaaa aaaa aaaa\n\nbbbb bbbb bbbb bbbb", "cccc"}},
		{"fence moves whole", "intro text that is long enough here\n\n```go\nx := 1\ny := 2\n```\nafter", 60,
			[]string{"intro text that is long enough here", "```go\nx := 1\ny := 2\n```\nafter"}},
		{"long fence reopens", "```sh\n" + strings.Repeat("echo line\n", 8) + "```", 48,
			// 6 + 3×10 + 3 = 39 units; a fourth line would need 49 > 48.
			[]string{"```sh\necho line\necho line\necho line\n```", "```sh\necho line\necho line\necho line\n```", "```sh\necho line\necho line\n```"}},
		{"utf16 units", strings.Repeat("😀", 40), 32, []string{strings.Repeat("😀", 16), strings.Repeat("😀", 16), strings.Repeat("😀", 8)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, render.Split(tt.in, tt.max)); diff != "" {
				t.Errorf("Split (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSplitProperties checks, over random Markdown, that every chunk fits,
// every chunk has balanced fences, and no line is lost or repeated.
func TestSplitProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		var b strings.Builder
		n := 0
		for b.Len() < 200+r.IntN(3000) {
			switch r.IntN(4) {
			case 0:
				b.WriteString("```py\n")
				for range 1 + r.IntN(30) {
					fmt.Fprintf(&b, "L%04d = %d\n", n, r.IntN(1e6))
					n++
				}
				b.WriteString("```\n\n")
			default:
				for range 1 + r.IntN(4) {
					fmt.Fprintf(&b, "L%04d %s\n", n, strings.Repeat("word ", r.IntN(20)))
					n++
				}
				b.WriteString("\n")
			}
		}
		in := b.String()
		max := 60 + r.IntN(500)
		chunks := render.Split(in, max)
		var lines []string
		for _, c := range chunks {
			if render.Len(c) > max {
				t.Fatalf("iter %d: chunk of %d > %d:\n%s", iter, render.Len(c), max, c)
			}
			if strings.Count(c, "```")%2 != 0 {
				t.Fatalf("iter %d: unbalanced fence in chunk:\n%s", iter, c)
			}
			for _, l := range strings.Split(c, "\n") {
				if strings.HasPrefix(l, "L") {
					lines = append(lines, strings.Fields(l)[0])
				}
			}
		}
		var want []string
		for _, l := range strings.Split(in, "\n") {
			if strings.HasPrefix(l, "L") {
				want = append(want, strings.Fields(l)[0])
			}
		}
		// A line longer than a chunk may be cut between words; every line
		// still starts exactly once.
		if diff := cmp.Diff(want, dedupeCut(lines)); diff != "" {
			t.Fatalf("iter %d (max %d): lines differ (-want +got):\n%s", iter, max, diff)
		}
	}
}

func dedupeCut(ls []string) []string {
	var out []string
	for _, l := range ls {
		if len(l) == 5 {
			out = append(out, l)
		}
	}
	return out
}
