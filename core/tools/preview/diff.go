package preview

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the work of one line diff (lines of a × lines of b);
// past it the texts are shown as replaced wholesale.
const maxDiffCells = 4_000_000

// op is one line of a diff.
type op struct {
	kind byte // ' ', '-' or '+'
	text string
	a, b int // line numbers (1-based) in a and b; 0 when absent
}

// lineDiff returns the edit script from a to b, by longest common
// subsequence of lines.
func lineDiff(a, b []string) []op {
	n, m := len(a), len(b)
	if n*m > maxDiffCells {
		ops := make([]op, 0, n+m)
		for i, l := range a {
			ops = append(ops, op{'-', l, i + 1, 0})
		}
		for j, l := range b {
			ops = append(ops, op{'+', l, 0, j + 1})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			ops = append(ops, op{' ', a[i], i + 1, j + 1})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			ops = append(ops, op{'-', a[i], i + 1, 0})
			i++
		default:
			ops = append(ops, op{'+', b[j], 0, j + 1})
			j++
		}
	}
	for ; i < n; i++ {
		ops = append(ops, op{'-', a[i], i + 1, 0})
	}
	for ; j < m; j++ {
		ops = append(ops, op{'+', b[j], 0, j + 1})
	}
	return ops
}

// hunks groups the changes of ops with context unchanged lines around
// each; unchanged lines further away are left out.
func hunks(ops []op, context int) [][]op {
	keep := make([]bool, len(ops))
	for k, o := range ops {
		if o.kind == ' ' {
			continue
		}
		for i := max(k-context, 0); i <= min(k+context, len(ops)-1); i++ {
			keep[i] = true
		}
	}
	var out [][]op
	var cur []op
	for k, o := range ops {
		if !keep[k] {
			if cur != nil {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, o)
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

// splitLines splits text into lines without their line ends; an empty
// text has no lines.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// unified is a unified diff of two texts (hunks with "@@" headers and
// three lines of context), empty when they are equal. The "---"/"+++"
// header names are left to the caller.
func unified(a, b string) string {
	hs := hunks(lineDiff(splitLines(a), splitLines(b)), 3)
	var s strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&s, "@@ -%s +%s @@\n", span(h, true), span(h, false))
		for _, o := range h {
			s.WriteByte(o.kind)
			s.WriteString(o.text)
			s.WriteByte('\n')
		}
	}
	return strings.TrimSuffix(s.String(), "\n")
}

// span is the "start,count" of a hunk in a (old) or b.
func span(h []op, old bool) string {
	start, n := 0, 0
	for _, o := range h {
		line := o.b
		if old {
			line = o.a
		}
		if line == 0 {
			continue
		}
		if n == 0 {
			start = line
		}
		n++
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// compact is a diff for people reading a card: the changed lines with two
// lines of context, hunks separated by "…", no line numbers. Empty when a
// and b are equal.
func compact(a, b string) string {
	hs := hunks(lineDiff(splitLines(a), splitLines(b)), 2)
	var s strings.Builder
	for i, h := range hs {
		if i > 0 {
			s.WriteString(" …\n")
		}
		for _, o := range h {
			s.WriteByte(o.kind)
			s.WriteString(o.text)
			s.WriteByte('\n')
		}
	}
	return strings.TrimSuffix(s.String(), "\n")
}

// changedLines counts the lines a diff removes and adds.
func changedLines(diff string) (removed, added int) {
	for _, l := range splitLines(diff) {
		switch {
		case strings.HasPrefix(l, "@@"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			removed++
		case strings.HasPrefix(l, "+"):
			added++
		}
	}
	return removed, added
}
