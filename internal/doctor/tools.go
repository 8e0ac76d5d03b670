package doctor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/config"
)

func (d *Doctor) checkTools(ctx context.Context, r *report, cfg *config.Config) {
	if len(cfg.Tools.Servers) == 0 {
		r.warn("tools", "no MCP servers configured (tools.servers): opsgate can talk but not look at or change anything")
		return
	}
	host, err := d.Tools(tools.WithConnectTimeout(toolsTimeout))
	if err != nil {
		r.fail("tools", "fix tools.servers in the configuration", "%v", err)
		return
	}
	defer host.Close()
	for i, s := range cfg.Tools.Servers {
		list, err := host.Tools(ctx, s.Name)
		if err != nil {
			r.fail("tools", toolsHint(i, s, err), "%s: cannot start or reach the server: %v", s.Name, err)
			continue
		}
		approval := 0
		for _, t := range list {
			if t.Risk.NeedsApproval() {
				approval++
			}
		}
		r.ok("tools", "%s: %d tools, %d need approval (%s)", s.Name, len(list), approval, serverWhere(s))
		for _, t := range list {
			r.detail("%-28s %s", t.Name, riskLabel(t))
		}
		checkAnnotations(ctx, r, host, s, list)
	}
	r.ok("tools", "loaded by default: %s", joinOr(cfg.Tools.DefaultToolsets, "none"))
}

func serverWhere(s config.MCPServer) string {
	if s.URL != "" {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

func riskLabel(t core.Tool) string {
	configured := t.RiskSource == core.RiskConfigured
	switch {
	case t.Risk == core.RiskRead && configured:
		return "read (configured)"
	case t.Risk == core.RiskRead:
		return "read"
	case configured:
		return string(t.Risk) + " (configured), needs approval"
	default:
		return string(t.Risk) + " (needs approval)"
	}
}

func toolsHint(i int, s config.MCPServer, err error) string {
	key := fmt.Sprintf("tools.servers[%d]", i)
	switch {
	case s.Command != "" && (errors.Is(err, exec.ErrNotFound) || strings.Contains(err.Error(), "executable file not found") || strings.Contains(err.Error(), "no such file")):
		return fmt.Sprintf("install %q or correct %s.command (it must be an executable on opsgate's PATH)", s.Command, key)
	case s.Command != "":
		return fmt.Sprintf("run `%s` by hand to see why it fails; check %s.args and %s.env", serverWhere(s), key, key)
	default:
		return fmt.Sprintf("check that the server is running and that %s.url (%s) is reachable from here; add %s.headers if it needs authentication", key, s.URL, key)
	}
}

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

// joinOr lists names for messages: "a, b", or none when empty.
func joinOr(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return strings.Join(names, ", ")
}
