package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const argoServer = "tools:\n  servers:\n    - name: argocd\n      command: argocd-mcp\n      args: [stdio]\n"

func TestAnnotationsLoad(t *testing.T) {
	dir := inEmptyDir(t)
	writeFile(t, dir, "c.yaml", argoServer+"      annotations:\n        read: [\"get_*\", list_*]\n        destructive: [delete_*]\n")
	c, err := Load("c.yaml", env())
	if err != nil {
		t.Fatal(err)
	}
	want := Annotations{Read: []string{"get_*", "list_*"}, Destructive: []string{"delete_*"}}
	if diff := cmp.Diff(want, c.Tools.Servers[0].Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	// The same from the environment, as JSON.
	c, err = Load("", env("OPSGATE_TOOLS_SERVERS", `[{"name":"argocd","command":"argocd-mcp","annotations":{"read":["get_*"]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tools.Servers[0].Annotations; !cmp.Equal(got, Annotations{Read: []string{"get_*"}}) {
		t.Errorf("annotations from OPSGATE_TOOLS_SERVERS = %+v", got)
	}

	// Empty lists, as in the design's example of a server entry, load and
	// override nothing.
	writeFile(t, dir, "c.yaml", argoServer+"      annotations: {read: [], destructive: []}\n")
	if c, err = Load("c.yaml", env()); err != nil {
		t.Fatalf("empty lists: %v", err)
	}
	if got := c.Tools.Servers[0].Annotations; len(got.Read)+len(got.Destructive) != 0 {
		t.Errorf("empty lists loaded as %+v", got)
	}
}

func TestAnnotationsErrors(t *testing.T) {
	tests := []struct {
		name, body string
		env        []string
		want       string
	}{
		{"unknown key", argoServer + "      annotations: {reads: [get_*]}\n", nil,
			"config: tools.servers[0].annotations.reads: unknown key (did you mean tools.servers[0].annotations.read?) (c.yaml line 6)"},
		{"unknown key unlike any", argoServer + "      annotations:\n        idempotent: [get_*]\n", nil,
			"config: tools.servers[0].annotations.idempotent: unknown key …"},
		{"bad glob", argoServer + "      annotations:\n        read: [get_*, \"list_[a-z\"]\n", nil,
			`config: tools.servers[0].annotations.read[1]: "list_[a-z" is not a valid glob (use *, ? and [a-z], and close every [) (c.yaml line 7)`},
		{"empty glob", argoServer + "      annotations:\n        destructive: [\"\"]\n", nil,
			`config: tools.servers[0].annotations.destructive[0]: empty glob: give a tool name or a pattern such as "get_*" (c.yaml line 7)`},
		{"a single glob, not a list", argoServer + "      annotations:\n        read: get_*\n", nil,
			"config: tools.servers[0].annotations.read: must be a list (got \"get_*\") (c.yaml line 7)"},
		{"not a mapping", argoServer + "      annotations: [get_*]\n", nil,
			"config: tools.servers[0].annotations: must be a mapping of keys (got a list) (c.yaml line 6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := inEmptyDir(t)
			writeFile(t, dir, "c.yaml", tt.body)
			_, err := Load("c.yaml", env(tt.env...))
			if err == nil {
				t.Fatalf("Load succeeded, want %q", tt.want)
			}
			if prefix, ok := strings.CutSuffix(tt.want, "…"); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Fatalf("err = %q, want prefix %q", err, prefix)
				}
				return
			}
			if err.Error() != tt.want {
				t.Errorf("err  = %q\nwant = %q", err, tt.want)
			}
		})
	}
}
