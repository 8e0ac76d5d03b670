package config

import (
	"fmt"

	"github.com/opsgate/opsgate/core/tools/toolset"
)

// Annotations are globs over a server's own tool names. Read makes a tool
// a read (run without approval) only when its server claims nothing about
// it; Destructive makes any tool destructive. An empty list overrides
// nothing (docs/design.md §7's example shows both lists empty).
type Annotations struct {
	Read        []string `yaml:"read"`
	Destructive []string `yaml:"destructive"`
}

// validateAnnotations checks a server's annotations overrides: each list
// holds globs.
func (c *Config) validateAnnotations(p string, a Annotations) error {
	for _, l := range []struct {
		key   string
		globs []string
	}{{"read", a.Read}, {"destructive", a.Destructive}} {
		key, globs := l.key, l.globs
		for i, g := range globs {
			if err := toolset.CheckGlob(g); err != nil {
				return c.errorf(fmt.Sprintf("%s.%s[%d]", p, key, i), "%v", err)
			}
		}
	}
	return nil
}
