package rendertest

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// LongAnswer returns about n characters of Markdown as models write it:
// numbered paragraphs with inline markup, a link and characters every
// format must escape (<, >, &), and code blocks of codeLines numbered lines
// with blank lines inside (which tempt a paragraph cut). It ends with the
// line "p-end That is all.". Every numbered line is unique, so CheckWhole
// can find each exactly once; blocks lists the lines of each code block.
func LongAnswer(n, codeLines int) (answer string, blocks [][]string) {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%3 == 2 {
			var block []string
			b.WriteString("```go\n")
			for j := range codeLines {
				l := fmt.Sprintf("c%03d-%02d := replicas[%d] <- ok && x > y", i, j, j)
				block = append(block, l)
				b.WriteString(l + "\n")
				if j%4 == 3 {
					b.WriteString("\n")
				}
			}
			b.WriteString("```\n\n")
			blocks = append(blocks, block)
			continue
		}
		fmt.Fprintf(&b, "p%03d Step %d: check the **rollout** of `web` (see [the runbook](https://runbooks.example.com/step/%d)) and compare error rates <1%% & latency.\n\n", i, i, i)
	}
	b.WriteString("p-end That is all.")
	return b.String(), blocks
}

// numbered matches the first word of a line LongAnswer numbered.
var numbered = regexp.MustCompile(`^(p\d+|c\d+-\d+|p-end)$`)

// lineIDs returns the numbers of the numbered lines of text, in order.
func lineIDs(text string) []string {
	var ids []string
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 0 && numbered.MatchString(f[0]) {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// CheckWhole fails t unless units — the texts a reader sees, in order: the
// messages, or finer, their sections — carry every numbered line of answer
// (made by LongAnswer) exactly once and in order, and every code block sits
// inside one unit.
func CheckWhole(t testing.TB, answer string, blocks [][]string, units []string) {
	t.Helper()
	var seen []string
	where := map[string]int{}
	for i, u := range units {
		for _, id := range lineIDs(u) {
			seen = append(seen, id)
			where[id] = i
		}
	}
	want := lineIDs(answer)
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		count := map[string]int{}
		for _, id := range seen {
			count[id]++
		}
		for _, id := range want {
			if count[id] != 1 {
				t.Errorf("line %s is shown %d times, want once", id, count[id])
			}
		}
		t.Errorf("the answer did not arrive whole and in order: %d numbered lines shown, want %d", len(seen), len(want))
	}
	for _, block := range blocks {
		first := strings.Fields(block[0])[0]
		for _, l := range block[1:] {
			if id := strings.Fields(l)[0]; where[id] != where[first] {
				t.Errorf("code block %s is split across units %d and %d", first, where[first], where[id])
				break
			}
		}
	}
}
