package config

import (
	"fmt"
	"strings"
)

// PreviewRecipe says how to preview the calls of one tool of a server
// without a built-in preview (docs/design.md §18): read a field with one
// of the server's read tools and show it next to the value the call sets.
//
//	previews:
//	  - tool: set_replicas                  # the tool whose cards get the preview
//	    read: get_service                   # a read tool of the same server
//	    args: {service: name, env: namespace}  # the read tool's argument: the call's argument it takes
//	    field: spec.replicas                # the field of the read tool's JSON result the call changes
//	    value: replicas                     # the call's argument with the new value (optional)
type PreviewRecipe struct {
	Tool  string            `yaml:"tool"`
	Read  string            `yaml:"read"`
	Args  map[string]string `yaml:"args"`
	Field string            `yaml:"field"`
	Value string            `yaml:"value"`
}

// recipeName reports whether s can name an MCP tool: 1 to 128 letters,
// digits and _ . - /. It is written out rather than a regexp: the bounded
// repetition compiled to 128 copies of the class, 80 KB and 1,500
// allocations at every start (issue 25), for a check of one line.
func recipeName(s string) bool {
	return len(s) >= 1 && len(s) <= 128 && strings.Trim(s, nameChars+"./") == ""
}

// recipeField reports whether s is a dotted path: words of letters, digits,
// _ and - joined by single dots.
func recipeField(s string) bool {
	for w := range strings.SplitSeq(s, ".") {
		if w == "" || strings.Trim(w, nameChars) != "" {
			return false
		}
	}
	return true
}

const nameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

// validatePreviews checks a server's recipes: each names its tool once, a
// read tool other than itself, and a dotted field path.
func (c *Config) validatePreviews(path string, rs []PreviewRecipe) error {
	seen := map[string]int{}
	for i, r := range rs {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case !recipeName(r.Tool):
			return c.errorf(p+".tool", "must name the tool whose calls get the preview (got %q)", r.Tool)
		case !recipeName(r.Read):
			return c.errorf(p+".read", "must name a read tool of the same server (got %q)", r.Read)
		case r.Read == r.Tool:
			return c.errorf(p+".read", "%q is the previewed tool itself; a preview only reads, name a read tool", r.Read)
		case !recipeField(r.Field):
			return c.errorf(p+".field", "must be a dotted path into the read tool's JSON result, such as spec.replicas (got %q)", r.Field)
		}
		if j, dup := seen[r.Tool]; dup {
			return c.errorf(p+".tool", "%q already has a recipe (%s[%d]); one recipe per tool", r.Tool, path, j)
		}
		seen[r.Tool] = i
		for k, v := range r.Args {
			if k == "" || v == "" {
				return c.errorf(p+".args", "maps the read tool's argument to the call's argument; %q: %q has an empty side", k, v)
			}
		}
	}
	return nil
}
