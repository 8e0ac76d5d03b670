package proctest

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Start starts cmd in a process group of its own (so that stopping it
// reaches anything it started), with the kernel killing it when the test
// binary dies, even by SIGKILL or a panic that skips every cleanup.
//
// Pdeathsig fires when the thread that forked the child exits, not the
// process, and Go may end an idle thread. So every child is started from
// one goroutine locked to its thread for the life of the process: its
// thread never exits, and the signal comes only when the test binary does.
func Start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	spawnOnce.Do(func() {
		spawnJobs = make(chan spawnJob)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives on
			for j := range spawnJobs {
				j.done <- j.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawnJobs <- spawnJob{cmd, done}
	return <-done
}

var (
	spawnOnce sync.Once
	spawnJobs chan spawnJob
)

type spawnJob struct {
	cmd  *exec.Cmd
	done chan error
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// Alive reports whether a process with this id exists.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
