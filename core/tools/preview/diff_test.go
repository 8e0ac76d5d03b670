package preview

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"one line changed, context of three", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8"},
		{"two hunks far apart", "a\n1\n2\n3\n4\n5\n6\n7\n8\nz\n", "A\n1\n2\n3\n4\n5\n6\n7\n8\nZ\n",
			"@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-z\n+Z"},
		{"from empty", "", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y"},
		{"no final newline", "a\nb", "a\nc", "@@ -1,2 +1,2 @@\n a\n-b\n+c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, unified(tt.a, tt.b)); diff != "" {
				t.Errorf("unified (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompactDiffSeparatesHunks(t *testing.T) {
	a := "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: 10\n"
	b := "a: 1\nb: 20\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 90\nj: 10\n"
	want := " a: 1\n-b: 2\n+b: 20\n c: 3\n d: 4\n …\n g: 7\n h: 8\n-i: 9\n+i: 90\n j: 10"
	if diff := cmp.Diff(want, compact(a, b)); diff != "" {
		t.Errorf("compact (-want +got):\n%s", diff)
	}
	if rm, add := changedLines(compact(a, b)); rm != 2 || add != 2 {
		t.Errorf("changedLines = -%d +%d, want -2 +2", rm, add)
	}
}

// A diff too large to compute line by line is shown as replaced
// wholesale rather than taking unbounded time and memory.
func TestLineDiffBoundsItsWork(t *testing.T) {
	a := strings.Repeat("x\n", 2100)
	b := strings.Repeat("y\n", 2100)
	ops := lineDiff(splitLines(a), splitLines(b))
	if len(ops) != 4200 || ops[0].kind != '-' || ops[4199].kind != '+' {
		t.Errorf("got %d ops, first %q last %q", len(ops), ops[0].kind, ops[len(ops)-1].kind)
	}
}

func TestUnfenceAndRefusal(t *testing.T) {
	dry := "```diff\nIndex: /srv/a.txt\n--- /srv/a.txt\n+++ /srv/a.txt\n@@ -1 +1 @@\n-old\n+new\n```\n\n"
	if got, want := unfence(dry), "Index: /srv/a.txt\n--- /srv/a.txt\n+++ /srv/a.txt\n@@ -1 +1 @@\n-old\n+new"; got != want {
		t.Errorf("unfence = %q, want %q", got, want)
	}
	kubectl := "kubectl_generic failed: MCP error -32603: Failed to execute kubectl command: Command failed: kubectl patch deployment web\n" +
		`The Deployment "web" is invalid: spec.replicas: Invalid value: -5: must be greater than or equal to 0` + "\n"
	if got, want := refusal(kubectl), `The Deployment "web" is invalid: spec.replicas: Invalid value: -5: must be greater than or equal to 0`; got != want {
		t.Errorf("refusal = %q, want %q", got, want)
	}
	if got := refusal("boom\nsomething broke\n"); got != "something broke" {
		t.Errorf("refusal without a known line = %q, want the last line", got)
	}
}
