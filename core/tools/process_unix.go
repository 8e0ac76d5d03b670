//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the child in a process group of its own, so that
// closing the server can stop its descendants too, and a Ctrl-C meant for
// opsgate's terminal does not hit the servers directly.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills the process group led by pid; it is a no-op when
// the group is already gone.
func killProcessGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
