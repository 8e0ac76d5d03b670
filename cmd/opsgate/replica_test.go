package main

import (
	"context"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core/coretest"
)

// replica is one `opsgate serve` process of the real binary.
type replica struct {
	t    *testing.T
	name string
	log  *coretest.SyncBuffer
	done chan struct{}
	pid  int
}

var servingRE = regexp.MustCompile(`msg="opsgate serving"`)

// startReplica starts `opsgate serve --config cfg` in dir and waits until
// it serves. It is killed when the test ends.
func startReplica(t *testing.T, dir, cfg, name string) *replica {
	t.Helper()
	r := launchReplica(t, dir, cfg, name)
	deadline := time.After(30 * time.Second)
	for !r.serving() {
		select {
		case <-r.done:
			t.Fatalf("replica %s exited:\n%s", name, r.log.String())
		case <-deadline:
			t.Fatalf("replica %s did not start:\n%s", name, r.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return r
}

// serving reports whether the replica has said it serves.
func (r *replica) serving() bool { return servingRE.MatchString(r.log.String()) }

// launchReplica is startReplica without the wait: the process may still
// be starting (or waiting for its store) when it returns.
func launchReplica(t *testing.T, dir, cfg, name string) *replica {
	t.Helper()
	cmd := binaryCommand(context.Background(), t, dir, "serve", "--config", cfg, "--log-level", "debug")
	r := &replica{t: t, name: name, log: &coretest.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.log, r.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start replica %s: %v", name, err)
	}
	r.pid = cmd.Process.Pid
	go func() { cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.done
		if t.Failed() {
			t.Logf("replica %s log:\n%s", name, r.log.String())
		}
	})
	return r
}

// stop sends SIGTERM and waits for the process to exit.
func (r *replica) stop() {
	r.t.Helper()
	syscall.Kill(r.pid, syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(40 * time.Second):
		r.t.Fatalf("replica %s did not stop on SIGTERM:\n%s", r.name, r.log.String())
	}
}

// kill9 kills the process the way a node dies: no shutdown at all.
func (r *replica) kill9() {
	syscall.Kill(r.pid, syscall.SIGKILL)
	<-r.done
}
