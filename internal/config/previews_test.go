package config

import (
	"regexp"
	"strings"
	"testing"
)

// Each way a preview recipe can be wrong is refused with the key and what
// to write instead; a good recipe loads as written.
func TestPreviewRecipes(t *testing.T) {
	const server = "tools:\n  servers:\n    - name: pools\n      url: http://pools/mcp\n      previews:\n"
	tests := []struct {
		name, recipe, want string
	}{
		{"no tool", "        - {read: get_size, field: size}\n",
			"tools.servers[0].previews[0].tool: must name the tool whose calls get the preview"},
		{"no read tool", "        - {tool: set_size, field: size}\n",
			"tools.servers[0].previews[0].read: must name a read tool of the same server"},
		{"reads with itself", "        - {tool: set_size, read: set_size, field: size}\n",
			`tools.servers[0].previews[0].read: "set_size" is the previewed tool itself`},
		{"bad field", "        - {tool: set_size, read: get_size, field: 'spec..replicas'}\n",
			"tools.servers[0].previews[0].field: must be a dotted path"},
		{"two recipes for a tool", "        - {tool: set_size, read: get_size, field: size}\n        - {tool: set_size, read: get_pool, field: size}\n",
			`tools.servers[0].previews[1].tool: "set_size" already has a recipe (tools.servers[0].previews[0])`},
		{"empty argument", "        - {tool: set_size, read: get_size, field: size, args: {pool: ''}}\n",
			"tools.servers[0].previews[0].args: maps the read tool's argument to the call's argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := inEmptyDir(t)
			writeFile(t, dir, "c.yaml", server+tt.recipe)
			_, err := Load("c.yaml", env())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err  = %v\nwant it to contain %s", err, tt.want)
			}
		})
	}
	dir := inEmptyDir(t)
	writeFile(t, dir, "c.yaml", server+"        - {tool: set_size, read: get_size, args: {pool: pool}, field: spec.size, value: size}\n")
	cfg, err := Load("c.yaml", env())
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Tools.Servers[0].Previews
	if len(got) != 1 || got[0].Tool != "set_size" || got[0].Args["pool"] != "pool" || got[0].Field != "spec.size" || got[0].Value != "size" {
		t.Errorf("recipe = %+v", got)
	}
}

// The recipe checks are written out rather than compiled regexps (issue
// 25: the bounded repetition cost 80 KB at every start); they accept
// exactly what the regexps did.
func TestRecipeChecksMatchTheirRegexps(t *testing.T) {
	name := regexp.MustCompile(`^[A-Za-z0-9_.\-/]{1,128}$`)
	field := regexp.MustCompile(`^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$`)
	inputs := []string{"", "a", "pods_get", "kube/get.v2", "a b", "é", "spec.replicas", ".spec", "spec.", "spec..x",
		"a-b_c.d-e", strings.Repeat("x", 128), strings.Repeat("x", 129), "x\n", "x$", "*"}
	for _, in := range inputs {
		if got, want := recipeName(in), name.MatchString(in); got != want {
			t.Errorf("recipeName(%q) = %v, the regexp says %v", in, got, want)
		}
		if got, want := recipeField(in), field.MatchString(in); got != want {
			t.Errorf("recipeField(%q) = %v, the regexp says %v", in, got, want)
		}
	}
}

func FuzzRecipeChecksMatchTheirRegexps(f *testing.F) {
	name := regexp.MustCompile(`^[A-Za-z0-9_.\-/]{1,128}$`)
	field := regexp.MustCompile(`^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$`)
	for _, s := range []string{"spec.replicas", "kube/get", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if recipeName(in) != name.MatchString(in) || recipeField(in) != field.MatchString(in) {
			t.Fatalf("%q: recipeName %v/%v, recipeField %v/%v", in, recipeName(in), name.MatchString(in), recipeField(in), field.MatchString(in))
		}
	})
}
