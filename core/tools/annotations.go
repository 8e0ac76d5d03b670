package tools

import (
	"fmt"
	"path"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools/toolset"
)

// Annotations are the overrides in a server's entry (the annotations key of
// tools.servers, docs/design.md §3): globs over the server's own tool names
// (path.Match syntax: *, ?, [a-z]).
//
// Read makes a matching tool a read, but only when its server claims
// nothing about it: no readOnlyHint at all and no destructiveHint true. A
// server that says a tool writes is never overruled, so the gate cannot be
// configured open for a tool its author marked as changing things.
// Destructive makes a matching tool destructive whatever its server says;
// it wins over Read.
type Annotations struct {
	Read        []string
	Destructive []string
}

// globList is one of the lists with its key.
type globList struct {
	key   string
	globs []string
}

func (a Annotations) lists() []globList {
	return []globList{{"read", a.Read}, {"destructive", a.Destructive}}
}

// validate checks every glob. A list given but empty, or an empty glob,
// is refused: it overrides nothing, which is never what was meant.
func (a Annotations) validate() error {
	for _, l := range a.lists() {
		if l.globs != nil && len(l.globs) == 0 {
			return fmt.Errorf("annotations.%s is an empty list: give globs of the server's tool names, or leave it out", l.key)
		}
		for i, g := range l.globs {
			if err := toolset.CheckGlob(g); err != nil {
				return fmt.Errorf("annotations.%s[%d]: %w", l.key, i, err)
			}
		}
	}
	return nil
}

// matching returns the first of globs that matches name, or "".
func matching(globs []string, name string) string {
	i := slices.IndexFunc(globs, func(g string) bool {
		ok, _ := path.Match(g, name)
		return ok
	})
	if i < 0 {
		return ""
	}
	return globs[i]
}

// classified is a tool's risk, where it came from, and the read glob that
// matched it but could not loosen it ("" when none did).
type classified struct {
	risk    core.Risk
	source  core.RiskSource
	refused string
}

// classify is the one place a tool's risk is decided: its server's
// annotations (riskOf), then the overrides of its server's entry.
func (a Annotations) classify(name string, ann mcp.ToolAnnotation) classified {
	c := classified{risk: riskOf(ann), source: core.RiskFromDefault}
	claimsWrite := ann.DestructiveHint != nil && *ann.DestructiveHint
	if ann.ReadOnlyHint != nil || claimsWrite {
		c.source = core.RiskFromAnnotation
	}
	if g := matching(a.Read, name); g != "" && c.risk != core.RiskRead {
		if ann.ReadOnlyHint == nil && !claimsWrite {
			c.risk, c.source = core.RiskRead, core.RiskConfigured
		} else {
			c.refused = g
		}
	}
	if matching(a.Destructive, name) != "" && c.risk != core.RiskDestructive {
		c.risk, c.source = core.RiskDestructive, core.RiskConfigured
	}
	return c
}

// Refusal is a tool a read glob of its server's entry matches but cannot
// make a read, because its server says it is not read-only.
type Refusal struct {
	Tool string // the server's name for it
	Glob string // the read glob that matched
	Risk core.Risk
	// Hint is the annotation that stands in the way, as the server sent it.
	Hint string
}

func (r Refusal) String() string {
	return fmt.Sprintf("%s matches annotations.read %q, but its server says %s: it stays %s and needs approval",
		r.Tool, r.Glob, r.Hint, r.Risk)
}

// hintOf names the annotation that keeps a tool from being loosened.
func hintOf(ann mcp.ToolAnnotation) string {
	if ann.ReadOnlyHint != nil && !*ann.ReadOnlyHint {
		return "readOnlyHint: false"
	}
	return "destructiveHint: true"
}

// Unmatched returns the globs that match none of list's tools (by their
// server's names), as "read \"lst_*\"": most likely a typo.
func (a Annotations) Unmatched(list []core.Tool) []string {
	var out []string
	for _, l := range a.lists() {
		for _, g := range l.globs {
			if !slices.ContainsFunc(list, func(t core.Tool) bool { ok, _ := path.Match(g, t.Remote); return ok }) {
				out = append(out, fmt.Sprintf("%s %q", l.key, g))
			}
		}
	}
	return out
}
