package config

import (
	"fmt"

	"github.com/opsgate/opsgate/core/tools/toolset"
)

// Annotations are globs over a server's own tool names. Read makes a tool
// a read (run without approval) only when its server claims nothing about
// it; Destructive makes any tool destructive. A list given must not be
// empty.
type Annotations struct {
	Read        []string `yaml:"read"`
	Destructive []string `yaml:"destructive"`
}

// validateAnnotations checks a server's annotations overrides: each list
// given holds globs (an empty one overrides nothing, which is never what
// was meant).
func (c *Config) validateAnnotations(p string, a Annotations) error {
	for _, l := range []struct {
		key   string
		globs []string
	}{{"read", a.Read}, {"destructive", a.Destructive}} {
		key, globs := l.key, l.globs
		if globs != nil && len(globs) == 0 {
			return c.errorf(p+"."+key, `is an empty list: give globs of the server's tool names such as ["get_*", "list_*"], or leave %s out`, key)
		}
		for i, g := range globs {
			if err := toolset.CheckGlob(g); err != nil {
				return c.errorf(fmt.Sprintf("%s.%s[%d]", p, key, i), "%v", err)
			}
		}
	}
	return nil
}
