package main

import (
	"context"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/config"
)

// checkAnnotations warns about what a server's annotations overrides do not
// do (docs/design.md §3): a read glob that matches a tool its server says
// is not read-only, which stays behind an approval, and a glob that
// matches no tool at all, most likely a typo.
func checkAnnotations(ctx context.Context, r *report, host *tools.Host, s config.MCPServer, list []core.Tool) {
	over := tools.Annotations{Read: s.Annotations.Read, Destructive: s.Annotations.Destructive}
	if len(over.Read) == 0 && len(over.Destructive) == 0 {
		return
	}
	refused, err := host.Refusals(ctx, s.Name)
	if err != nil {
		r.warn("tools", "%s: cannot check its annotations: %v", s.Name, err)
		return
	}
	for _, f := range refused {
		r.warn("tools", "%s: %s", s.Name, f)
	}
	for _, g := range over.Unmatched(list) {
		r.warn("tools", "%s: annotations.%s matches none of its tools", s.Name, g)
	}
}
