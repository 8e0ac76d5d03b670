//go:build !unix

package tools

import "os/exec"

// ownProcessGroup does nothing where process groups do not exist; only the
// child itself is stopped there.
func ownProcessGroup(*exec.Cmd) {}

func killProcessGroup(int) {}
