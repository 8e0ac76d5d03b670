package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// The MCP servers build.sh installs (pinned in deployments/kube/npm), by
// the name a test asks for them.
const (
	// KubernetesMCPServer is kubernetes-mcp-server 0.0.67, a Go binary
	// shipped in a per-platform npm package; its serverInfo name is
	// "kubernetes-mcp-server". It reads KUBECONFIG.
	KubernetesMCPServer = "kubernetes-mcp-server"
	// MCPServerKubernetes is mcp-server-kubernetes 4.1.7, which shells out
	// to kubectl on PATH; its serverInfo name is "kubernetes".
	MCPServerKubernetes = "mcp-server-kubernetes"
	// ArgoCDMCP is argocd-mcp 0.9.0 over stdio (ARGOCD_BASE_URL and
	// ARGOCD_API_TOKEN in its env); its tools carry no annotations.
	ArgoCDMCP = "argocd-mcp"
	// ServerFilesystem is @modelcontextprotocol/server-filesystem
	// 2026.8.31; append the directories it may serve to its argv.
	ServerFilesystem = "server-filesystem"
)

// NPMDir is where build.sh (mcp.sh) installs the npm packages.
func NPMDir() string { return filepath.Join(CacheDir(), "npm") }

// FindMCPServer returns the command line that starts the named server over
// stdio (one of the constants above), or an error saying what is missing.
func FindMCPServer(name string) ([]string, error) {
	mods := filepath.Join(NPMDir(), "node_modules")
	var argv []string
	switch name {
	case KubernetesMCPServer:
		// The npm package's index.js only execs this binary; starting it
		// directly saves a node process per server.
		plat := "kubernetes-mcp-server-" + runtime.GOOS + "-" + runtime.GOARCH
		argv = []string{filepath.Join(mods, plat, "bin", plat)}
	case MCPServerKubernetes:
		argv = []string{"", filepath.Join(mods, "mcp-server-kubernetes", "dist", "index.js")}
	case ArgoCDMCP:
		argv = []string{"", filepath.Join(mods, "argocd-mcp", "dist", "index.js"), "stdio"}
	case ServerFilesystem:
		argv = []string{"", filepath.Join(mods, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")}
	default:
		return nil, fmt.Errorf("kubetest: unknown MCP server %q", name)
	}
	entry := argv[0]
	if entry == "" {
		entry = argv[1]
		node, err := lookNode()
		if err != nil {
			return nil, err
		}
		argv[0] = node
	}
	if _, err := os.Stat(entry); err != nil {
		return nil, fmt.Errorf("%s is not installed: no %s (run %s)", name, entry, BuildCommand)
	}
	return argv, nil
}

// MCPServer returns the command line of the named server (FindMCPServer),
// skipping t (failing it under CI=true) when the server is not installed.
// The slice is the caller's to append to.
func MCPServer(t testing.TB, name string) []string {
	t.Helper()
	argv, err := FindMCPServer(name)
	need(t, "MCP server "+name, err)
	return slices.Clone(argv)
}
