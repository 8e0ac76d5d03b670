//go:build !linux

package kubetest

import (
	"os"
	"os/exec"
	"syscall"
)

// The control plane's binaries are built for Linux; elsewhere a child is
// only stopped by its cleanup.
func detach(*exec.Cmd) {}

func signalGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(sig)
	}
}

func start(cmd *exec.Cmd) error { return cmd.Start() }

// alive cannot tell here; a directory is never taken for abandoned.
func alive(int) bool { return true }
