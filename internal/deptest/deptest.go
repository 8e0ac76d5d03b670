// Package deptest guards what a package links, in the style of tailscale's
// tstest/deptest: a package's test lists its dependencies with
// `go list -deps` (the package as built, not its tests) and fails on a
// forbidden one. It keeps the small pieces that drag a heavy or unwanted
// dependency in (a database driver, the MCP client, package testing in the
// binary) from coming back unnoticed.
package deptest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// Check fails t for each dependency of pkg (an import path or a directory
// such as ".") that Bad forbids. Bad maps an import path to why it is
// forbidden; a key forbids that package and every package under it
// ("github.com/jackc/pgx" forbids github.com/jackc/pgx/v5/pgconn).
func Check(t *testing.T, pkg string, bad map[string]string) {
	t.Helper()
	deps := List(t, pkg)
	if len(deps) < 2 {
		t.Fatalf("go list -deps %s listed %d packages; want the package and its dependencies", pkg, len(deps))
	}
	for _, dep := range deps {
		for b, why := range bad {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("%s links %s: %s (find the importer with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' %s | grep %s)", pkg, dep, why, pkg, b)
			}
		}
	}
}

// List returns the import paths of pkg and everything it links.
func List(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr.Bytes())
	}
	return strings.Fields(string(out))
}
