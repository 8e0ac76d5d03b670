package bench

import (
	"errors"
	"os"
	"testing"

	"github.com/opsgate/opsgate/internal/kubetest"
)

// TestPreviewFigureQuick runs figure 13 (a real control plane and
// kubernetes-mcp-server) at smoke-test size. Without the control plane's
// binaries it is skipped loudly (failed under CI=true), as the Kubernetes
// drills are.
func TestPreviewFigureQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; skipped with -short")
	}
	_, err1 := kubetest.Binaries()
	_, err2 := kubetest.FindMCPServer(kubetest.KubernetesMCPServer)
	if err := errors.Join(err1, err2); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no control plane: %v", err)
		}
		t.Skipf("figure 13 SKIPPED: %v (run %s)", err, kubetest.BuildCommand)
	}
	runFigures(t, map[string]int{"13": 1})
}
