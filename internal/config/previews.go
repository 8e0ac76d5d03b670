package config

import (
	"fmt"
	"regexp"
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

var (
	recipeName  = regexp.MustCompile(`^[A-Za-z0-9_.\-/]{1,128}$`)
	recipeField = regexp.MustCompile(`^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$`)
)

// validatePreviews checks a server's recipes: each names its tool once, a
// read tool other than itself, and a dotted field path.
func (c *Config) validatePreviews(path string, rs []PreviewRecipe) error {
	seen := map[string]int{}
	for i, r := range rs {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case !recipeName.MatchString(r.Tool):
			return c.errorf(p+".tool", "must name the tool whose calls get the preview (got %q)", r.Tool)
		case !recipeName.MatchString(r.Read):
			return c.errorf(p+".read", "must name a read tool of the same server (got %q)", r.Read)
		case r.Read == r.Tool:
			return c.errorf(p+".read", "%q is the previewed tool itself; a preview only reads, name a read tool", r.Read)
		case !recipeField.MatchString(r.Field):
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
