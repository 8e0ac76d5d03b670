// Package kubetest gives tests a real Kubernetes control plane and the MCP
// servers SREs connect to it (docs/design.md §9): etcd, kube-apiserver
// and kube-controller-manager started on free ports of 127.0.0.1 in a
// temporary directory, kubectl, and the npm packages kubernetes-mcp-server,
// mcp-server-kubernetes, argocd-mcp and @modelcontextprotocol/server-filesystem.
//
// Everything comes from a cache that deployments/kube/build.sh fills
// ($OPSGATE_KUBE_CACHE, default ~/.cache/opsgate/kube-v1.37.2). Without
// it, a test that needs it is skipped with a loud message naming that
// script, except under CI=true, where that is a failure: CI must never
// report green for a suite it did not run.
//
// A start costs a few seconds and about 450 MB, so a package shares one
// cluster ([Shared], stopped by [Main] or [StopShared] from TestMain) and
// gives each test its own namespace ([Cluster.Namespace]); [Start] gives a
// test a cluster of its own. There is no kubelet: pods stay Pending, which
// is enough for Deployments, ReplicaSets, scale, patch, rollout history
// and deletes. Every process is stopped by its PID when the cluster is,
// and killed by the kernel if the test binary dies first.
package kubetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EnvCache names the cache directory build.sh fills (bin/ and npm/).
const EnvCache = "OPSGATE_KUBE_CACHE"

// Version is the Kubernetes version build.sh builds.
const Version = "v1.37.2"

// BuildCommand is what fills the cache, as a person types it at the root
// of the repository.
const BuildCommand = "deployments/kube/build.sh"

// binaries are the control plane's commands in <cache>/bin.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"}

// CacheDir is where build.sh puts the binaries and the npm packages.
func CacheDir() string {
	if d := os.Getenv(EnvCache); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "opsgate", "kube-"+Version)
}

// BinDir is the directory of etcd, kube-apiserver, kube-controller-manager
// and kubectl.
func BinDir() string { return filepath.Join(CacheDir(), "bin") }

// Binaries checks that the control plane's commands are built and returns
// their directory, or an error saying which one is missing and how to get
// it.
func Binaries() (string, error) {
	dir := BinDir()
	for _, b := range binaries {
		p := filepath.Join(dir, b)
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not built (run %s)", p, BuildCommand)
		}
	}
	return dir, nil
}

// need skips t (fails it under CI=true) when err says something is
// missing; the skip is loud because a silent one hides a suite that did
// not run.
func need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and no %s: %v", what, err)
	}
	msg := fmt.Sprintf("Kubernetes tests SKIPPED: no %s: %v; a first build takes about 15 min (%s)",
		what, err, t.Name())
	fmt.Fprintln(os.Stderr, "!!! "+msg)
	t.Skip(msg)
}

// kubectlPath is the cached kubectl; Debian's is far too old (1.20).
func kubectlPath() string { return filepath.Join(BinDir(), "kubectl") }

// lookNode finds node for the npm servers.
func lookNode() (string, error) {
	p, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("node is not on PATH (install Node.js 20 or newer): %w", err)
	}
	return p, nil
}
