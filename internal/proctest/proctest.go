// Package proctest starts and stops the real programs tests run (a
// Kubernetes control plane, Alertmanager) so that none outlives the test
// binary: each child leads a process group of its own, is stopped by its
// group, and, on Linux, is killed by the kernel when the test binary dies
// however it dies.
package proctest

import (
	"net"
	"syscall"
	"time"
)

// Stop sends SIGTERM to pid's process group, waits up to grace for exited
// (closed when the child's Wait returned) and then kills the group.
func Stop(pid int, exited <-chan struct{}, grace time.Duration) {
	signalGroup(pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		signalGroup(pid, syscall.SIGKILL)
		<-exited
	}
}

// FreePorts returns n distinct free ports of 127.0.0.1, held open
// together so that none is handed out twice.
func FreePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
