package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/render/rendertest"
)

// errorsTB records what CheckWhole reports instead of failing the test.
type errorsTB struct {
	testing.TB
	errs []string
}

func (r *errorsTB) Helper()                      {}
func (r *errorsTB) Errorf(f string, args ...any) { r.errs = append(r.errs, fmt.Sprintf(f, args...)) }

func TestCheckWholeFindsLossRepetitionAndSplitBlocks(t *testing.T) {
	answer, blocks := rendertest.LongAnswer(2000, 8)
	lines := strings.Split(answer, "\n")
	fence := -1 // a line inside the first code block
	for i, l := range lines {
		if strings.HasPrefix(l, blocks[0][3]) {
			fence = i
		}
	}
	cut := func(at int) []string {
		return []string{strings.Join(lines[:at], "\n"), strings.Join(lines[at:], "\n")}
	}
	tests := []struct {
		name  string
		units []string
		want  string // "" for no complaint
	}{
		{"whole, one unit", []string{answer}, ""},
		{"whole, cut between paragraphs", cut(2), ""},
		{"a line lost", []string{strings.Replace(answer, lines[0]+"\n", "", 1)}, "not arrive whole"},
		{"a line repeated", []string{answer, lines[0]}, "shown 2 times"},
		{"a code block split", cut(fence), "split across units"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &errorsTB{TB: t}
			rendertest.CheckWhole(rec, answer, blocks, tt.units)
			got := strings.Join(rec.errs, "\n")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("CheckWhole reported %q, want %q", got, tt.want)
			}
		})
	}
}
