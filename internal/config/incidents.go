package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// validateIncidents checks the incidents section (docs/design.md §19):
// each target says where its incidents go, and its globs compile.
func (c *Config) validateIncidents() error {
	if c.Incidents.RetriggerAfter <= 0 {
		return c.errorf("incidents.retrigger_after", "must be positive, e.g. 1h")
	}
	for i, t := range c.Incidents.Targets {
		p := fmt.Sprintf("incidents.targets[%d]", i)
		platform, id, _ := strings.Cut(t.To, ":")
		if !slices.Contains([]string{"telegram", "slack", "discord"}, platform) || id == "" {
			return c.errorf(p+".to", "%q is not PLATFORM:ID with PLATFORM one of slack, discord, telegram (e.g. slack:C0OPS)", t.To)
		}
		for label, glob := range t.Match {
			if label == "" {
				return c.errorf(p+".match", "a label name is empty")
			}
			if _, err := path.Match(glob, ""); err != nil {
				return c.errorf(p+".match."+label, "%q is not a glob (* and ? match characters): %v", glob, err)
			}
		}
		for j, a := range t.Approvers {
			if strings.TrimSpace(a) == "" {
				return c.errorf(fmt.Sprintf("%s.approvers[%d]", p, j), "is empty")
			}
		}
		for j, ts := range t.Toolsets {
			known := slices.Contains(ReservedToolsets, ts) || slices.ContainsFunc(c.Tools.Servers, func(s MCPServer) bool { return s.Name == ts })
			if !known {
				return c.errorf(fmt.Sprintf("%s.toolsets[%d]", p, j), "%q is not the name of a server in tools.servers", ts)
			}
		}
	}
	return nil
}
