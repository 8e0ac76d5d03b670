package render

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzSplit cuts arbitrary Markdown into messages of an arbitrary limit.
// Every chunk fits the limit (unless a fence marker alone is half of it)
// and is not blank; every chunk but the last
// closes the code fences it opens (and the last does too when the text
// did), so each renders on its own; and nothing is lost: the text's
// non-space characters appear in the chunks in order (Split only adds
// fence lines and drops white space at cuts).
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"hello **world**\n\n- one\n- two\n\n```go\nfmt.Println(1)\n```\nafter",
		"```sh\n" + strings.Repeat("echo line\n", 12) + "```",
		strings.Repeat("😀", 40),
		"~~~~ python extra\nx = 1\n~~~~\n\n`code` and [link](https://example.com)",
		"```\nunclosed fence\n" + strings.Repeat("word ", 30),
		strings.Repeat("x", 100) + "\n" + strings.Repeat("y ", 60),
	} {
		f.Add(s, uint16(40))
	}
	f.Fuzz(func(t *testing.T, md string, max uint16) {
		if len(md) > 8192 {
			t.Skip()
		}
		limit := int(max)
		chunks := Split(md, limit)
		if limit < 32 {
			limit = 32
		}
		// A fence marker so long that it cannot open and close a chunk
		// with one character inside cannot be cut within the limit.
		hopeless := false
		for _, fc := range scanFences(md) {
			hopeless = hopeless || 2*len(fc.marker)+4 > limit
		}
		var all []rune // per chunk: bytes of a rune cut apart must not rejoin
		for i, c := range chunks {
			if Len(c) > limit && !hopeless {
				t.Fatalf("chunk %d has %d units, over %d: %q", i, Len(c), limit, c)
			}
			if strings.TrimSpace(c) == "" {
				t.Fatalf("chunk %d is blank", i)
			}
			fs := scanFences(c)
			open := len(fs) > 0 && !fs[len(fs)-1].closed
			if open && i < len(chunks)-1 {
				t.Fatalf("chunk %d leaves a fence open: %q", i, c)
			}
			all = append(all, nonSpace(c)...)
		}
		if fs := scanFences(md); len(chunks) > 0 && (len(fs) == 0 || fs[len(fs)-1].closed) {
			if last := scanFences(chunks[len(chunks)-1]); len(last) > 0 && !last[len(last)-1].closed {
				t.Fatalf("the last chunk leaves open a fence the text closed: %q", chunks[len(chunks)-1])
			}
		}
		if !subsequence(nonSpace(md), all) {
			t.Fatalf("characters lost or reordered:\n%q\nchunks %q", md, chunks)
		}
	})
}

// nonSpace is s without white space (and with invalid UTF-8 as U+FFFD,
// which is what ranging over it yields).
func nonSpace(s string) []rune {
	var out []rune
	for _, r := range s {
		if !unicode.IsSpace(r) {
			out = append(out, r)
		}
	}
	return out
}

// subsequence reports whether a appears in b in order (not necessarily
// contiguously).
func subsequence(a, b []rune) bool {
	i := 0
	for _, r := range b {
		if i < len(a) && a[i] == r {
			i++
		}
	}
	return i == len(a)
}
