package tools

import (
	"path/filepath"
	"slices"
	"testing"
)

// The directories a server serves: roots: of its entry (made absolute),
// and what list_allowed_directories answers, asked once per server.
func TestRoots(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	rs := NewRoots(map[string][]string{"files": {"./sandbox"}, "k8s": nil})
	asked := map[string]int{}
	rs.Learn(func(server string) []string {
		asked[server]++
		if server == "files" {
			return allowedDirectories("Allowed directories:\n/srv/ops/sandbox\n/srv/ops/shared\n")
		}
		return nil
	})
	want := []string{filepath.ToSlash(filepath.Join(dir, "sandbox")), "/srv/ops/sandbox", "/srv/ops/shared"}
	for range 2 {
		if got := rs.Of("files"); !slices.Equal(got, want) {
			t.Errorf("of(files) = %v, want %v", got, want)
		}
		if got := rs.Of("k8s"); len(got) != 0 {
			t.Errorf("of(k8s) = %v, want none", got)
		}
	}
	if asked["files"] != 1 || asked["k8s"] != 1 {
		t.Errorf("asked %v; want each server once", asked)
	}
}
