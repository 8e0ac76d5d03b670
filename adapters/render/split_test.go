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

// Invalid UTF-8 (a model's bytes cut mid-rune, a tool's binary output) is
// one unit per byte for Len as for Split's cuts, and so is U+FFFD: a
// chunk Split made always fits by Len (found by FuzzSplit).
func TestSplitInvalidUTF8Fits(t *testing.T) {
	if n := render.Len("\xff\x80\uFFFD"); n != 3 {
		t.Errorf("Len = %d, want 3", n)
	}
	in := strings.Repeat("\x80", 10) + "\xf00\x98" + strings.Repeat("\x80", 7) + "\xf0" + strings.Repeat("\uFFFD", 40)
	for _, c := range render.Split(in, 40) {
		if render.Len(c) > 40 {
			t.Errorf("chunk %q has %d units, over 40", c, render.Len(c))
		}
	}
}

// A fence reopened in the next chunk keeps its opening line only as far
// as the line, a character and the closing marker fit the limit (found by
// FuzzSplit: a 35-character opener overflowed a 40-unit chunk).
func TestSplitLongFenceOpenerFits(t *testing.T) {
	in := " ~~~" + strings.Repeat("0", 37)
	for _, max := range []int{32, 36, 40, 41} {
		for _, c := range render.Split(in, max) {
			if render.Len(c) > max {
				t.Errorf("max %d: chunk %q has %d units", max, c, render.Len(c))
			}
		}
	}
}

// An opening line whose marker alone is too long for the limit is not cut
// inside its marker: "   ~~" opens nothing, and the marker added to close
// the chunk would open a fence instead (found by FuzzSplit).
func TestSplitDoesNotCutAFenceMarker(t *testing.T) {
	in := "   " + strings.Repeat("~", 26) + "0000"
	chunks := render.Split(in, 32)
	for i, c := range chunks[:len(chunks)-1] {
		if lines := strings.Split(c, "\n"); len(lines) < 2 || strings.TrimSpace(lines[0]) != strings.Repeat("~", 26) {
			t.Errorf("chunk %d = %q, want the whole marker on its first line, closed", i, c)
		}
	}
}

// A line that starts like a fence but is not one ("```00 0…`0", whose
// info string has a backtick) is not cut where its first part would open
// a code block that swallows the rest of the chunk (found by FuzzSplit).
func TestSplitDoesNotMakeAFence(t *testing.T) {
	in := "0000000000000\xb1\xc7000\n\n00000\n00000\n\n```00 00000000000000000`0000"
	for _, c := range render.Split(in, 24) {
		last := c[strings.LastIndexByte(c, '\n')+1:]
		if strings.HasPrefix(last, "```") && !strings.Contains(last[3:], "`") {
			t.Errorf("chunk %q ends in a fence the text did not open", c)
		}
	}
}

// Nor is prose cut right before a fence marker in it ("use ```yaml"),
// which would open a block at the start of the next chunk.
func TestSplitDoesNotOpenAFenceInProse(t *testing.T) {
	in := "000000 ```00000000000000000000000"
	for _, c := range render.Split(in, 32) {
		if strings.HasPrefix(c, "```") {
			t.Errorf("chunk %q starts a code block the text did not", c)
		}
	}
}

// White space that Split does not trim (a vertical tab) is no chunk, as a
// blank chunk anywhere else is none: platforms refuse empty messages
// (found by FuzzSplit).
func TestSplitBlankIsNoChunk(t *testing.T) {
	for _, in := range []string{"\v", " \v\f ", "\n\u00a0\n"} {
		if got := render.Split(in, 40); len(got) != 0 {
			t.Errorf("Split(%q) = %q, want no chunk", in, got)
		}
	}
}

// A long fence is not cut inside a line of its code where the line's
// first part would close the block early (found by FuzzSplit).
func TestSplitDoesNotCloseAFenceEarly(t *testing.T) {
	in := "0000\n```0000000000000000\n```0000000000" // the fence is open to the end
	chunks := render.Split(in, 32)
	for _, c := range chunks[:len(chunks)-1] {
		if strings.Count(c, "```")%2 != 0 {
			t.Errorf("chunk %q leaves a code block open", c)
		}
	}
}
