package config

import (
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
