package preview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// Host is what previews need of core/tools.Host: the tools of a toolset,
// calling one, and the name its server gave in serverInfo.
type Host interface {
	Tools(ctx context.Context, toolset string) ([]core.Tool, error)
	Call(ctx context.Context, tool core.Tool, args json.RawMessage, progress func(core.Progress)) (core.ToolResult, error)
	ServerName(ctx context.Context, toolset string) (string, error)
	// KnownServerName is ServerName without connecting; ok is false while
	// the server is not connected.
	KnownServerName(toolset string) (name string, ok bool)
}

// builder works out the preview of one tool's calls. It reads through r.
type builder func(ctx context.Context, r reader, args map[string]any) (core.Preview, error)

// Server names as their servers report them in serverInfo.
const (
	ServerKubernetesMCP = "kubernetes-mcp-server"
	ServerKubernetes    = "kubernetes"
	ServerFilesystem    = "secure-filesystem-server"
)

// builtin are the built-in previews by serverInfo name and tool.
var builtin = map[string]map[string]builder{
	ServerKubernetesMCP: {
		"resources_create_or_update": kmsCreateOrUpdate,
		"resources_scale":            kmsScale,
		"resources_delete":           kmsDelete,
		"pods_delete":                kmsPodDelete,
		"pods_exec":                  kmsPodExec,
		"pods_run":                   kmsPodRun,
	},
	ServerKubernetes: {
		"kubectl_scale":   kubectlScale,
		"kubectl_patch":   kubectlPatch,
		"kubectl_apply":   kubectlApply,
		"kubectl_rollout": kubectlRollout,
	},
	ServerFilesystem: {
		"write_file": fsWriteFile,
		"edit_file":  fsEditFile,
		"move_file":  fsMoveFile,
	},
}

// Previewer is core.Previewer over a Host. It is safe for concurrent use.
type Previewer struct {
	host    Host
	recipes map[string][]Recipe // by toolset
}

var _ core.Previewer = (*Previewer)(nil)

// New returns a Previewer reading through host, with recipes for servers
// without a built-in preview, by toolset name (tools.servers[].previews).
// Check the recipes with Recipe.Check first.
func New(host Host, recipes map[string][]Recipe) *Previewer {
	return &Previewer{host: host, recipes: recipes}
}

// Previews reports whether tool's calls get a preview: a recipe names it,
// or it is a built-in one of its server (by the tool's name alone while
// the server's serverInfo is not known yet).
func (p *Previewer) Previews(tool core.Tool) bool {
	if p.recipe(tool) != nil {
		return true
	}
	if name, ok := p.host.KnownServerName(tool.Toolset); ok {
		return builtin[name][remote(tool)] != nil
	}
	for _, tools := range builtin {
		if tools[remote(tool)] != nil {
			return true
		}
	}
	return false
}

// Preview works out what calling tool with args would change.
func (p *Previewer) Preview(ctx context.Context, tool core.Tool, args json.RawMessage) (core.Preview, error) {
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return core.Preview{}, fmt.Errorf("the arguments are not a JSON object: %w", err)
	}
	r := reader{host: p.host, toolset: tool.Toolset}
	if rc := p.recipe(tool); rc != nil {
		return rc.preview(ctx, r, obj)
	}
	server, err := p.host.ServerName(ctx, tool.Toolset)
	if err != nil {
		return core.Preview{}, err
	}
	b := builtin[server][remote(tool)]
	if b == nil {
		return core.Preview{}, fmt.Errorf("%s (server %q) has no built-in preview; a recipe under tools.servers[].previews can add one", remote(tool), server)
	}
	pv, err := b(ctx, r, obj)
	if err != nil {
		return core.Preview{}, err
	}
	pv.Status = core.PreviewReady
	return pv, nil
}

func (p *Previewer) recipe(tool core.Tool) *Recipe {
	for i, rc := range p.recipes[tool.Toolset] {
		if rc.Tool == remote(tool) {
			return &p.recipes[tool.Toolset][i]
		}
	}
	return nil
}

func remote(t core.Tool) string {
	if t.Remote != "" {
		return t.Remote
	}
	return t.Name
}

// reader calls the read tools (and documented dry-runs) of one toolset.
type reader struct {
	host    Host
	toolset string
}

// errNotRead is a tool a preview may not call: neither read risk nor a
// documented dry-run.
var errNotRead = errors.New("is not a read tool")

// read calls the toolset's tool named name, which must be a read tool
// unless dryRun says the call is the server's documented dry-run. A
// result with IsError is returned as a result, not an error: a dry-run's
// refusal is what the preview shows.
func (r reader) read(ctx context.Context, name string, args map[string]any, dryRun bool) (core.ToolResult, error) {
	tools, err := r.host.Tools(ctx, r.toolset)
	if err != nil {
		return core.ToolResult{}, err
	}
	for _, t := range tools {
		if remote(t) != name {
			continue
		}
		if t.Risk != core.RiskRead && !dryRun {
			return core.ToolResult{}, fmt.Errorf("%s %w (risk %s)", name, errNotRead, t.Risk)
		}
		raw, err := json.Marshal(args)
		if err != nil {
			return core.ToolResult{}, err
		}
		return r.host.Call(ctx, t, raw, nil)
	}
	return core.ToolResult{}, fmt.Errorf("the server has no tool %s to read with", name)
}

// hashOf is the hex SHA-256 of the parts, each length-prefixed.
func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// str is args[key] as a string ("" when absent or not a string).
func str(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

// oneLine is s on one line, at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
