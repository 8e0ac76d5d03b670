package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// binary is cmd/opsgate built once per run, for the figures that measure
// the real process (4 and 5).
type binary struct {
	once sync.Once
	path string
	tmp  string
	err  error
}

// get returns the binary's path, building it on first use.
func (b *binary) get(ctx context.Context) (string, error) {
	b.once.Do(func() {
		if b.path != "" {
			return
		}
		if b.tmp, b.err = os.MkdirTemp("", "opsgate-bench-bin-"); b.err != nil {
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			b.err = fmt.Errorf("bench: figures 4 and 5 build cmd/opsgate: %w", err)
			return
		}
		out := filepath.Join(b.tmp, "opsgate")
		// The module's import path builds from anywhere inside the module
		// (the repository root for make bench, bench/ for go test).
		cmd := exec.CommandContext(ctx, goTool, "build", "-o", out, "github.com/opsgate/opsgate/cmd/opsgate")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("bench: go build cmd/opsgate: %v\n%s", err, msg)
			return
		}
		if b.err = settle(out); b.err != nil {
			return
		}
		b.path = out
	})
	return b.path, b.err
}

func (b *binary) close() {
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
	}
}

// serveProc is a running `opsgate serve`.
type serveProc struct {
	cmd     *exec.Cmd
	started time.Time     // just before exec
	serving chan struct{} // closed when "opsgate serving" was logged
	servAt  time.Time     // when that line was read; valid once serving is closed
	exited  chan struct{} // closed when the process has exited
	code    int

	mu   sync.Mutex
	tail []string // the last lines of its log, for errors
	warn int      // log lines at level WARN or ERROR
}

// startServe starts `opsgate serve --config config`. Its environment is
// this process's without OPSGATE_* and OPENAI_* variables, which would
// override the configuration file.
func startServe(bin, config string) (*serveProc, error) {
	cmd := exec.Command(bin, "serve", "--config", config)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPSGATE_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &serveProc{cmd: cmd, serving: make(chan struct{}), exited: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	logDone := make(chan struct{})
	go p.readLog(stderr, logDone)
	go func() {
		<-logDone // Wait closes the pipe: read it to the end first
		err := cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		if err != nil && p.code == 0 {
			p.code = -1
		}
		close(p.exited)
	}()
	return p, nil
}

func (p *serveProc) readLog(r io.Reader, done chan<- struct{}) {
	defer close(done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	seen := false
	for sc.Scan() {
		line := sc.Text()
		if !seen && strings.Contains(line, `msg="opsgate serving"`) {
			p.servAt, seen = time.Now(), true
			close(p.serving)
		}
		p.mu.Lock()
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			p.warn++
		}
		p.tail = append(p.tail, line)
		if len(p.tail) > 40 {
			p.tail = p.tail[1:]
		}
		p.mu.Unlock()
	}
}

// log returns the last lines the process logged.
func (p *serveProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

func (p *serveProc) warnings() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.warn
}

// waitServing waits for the "opsgate serving" line.
func (p *serveProc) waitServing(timeout time.Duration) error {
	select {
	case <-p.serving:
		return nil
	case <-p.exited:
		return fmt.Errorf("bench: opsgate serve exited with %d before serving:\n%s", p.code, p.log())
	case <-time.After(timeout):
		return fmt.Errorf("bench: opsgate serve not serving after %s:\n%s", timeout, p.log())
	}
}

// stop sends SIGTERM and returns the exit code, killing the process if it
// has not exited within timeout.
func (p *serveProc) stop(timeout time.Duration) (int, error) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.code, nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return p.code, fmt.Errorf("bench: opsgate serve did not exit within %s of SIGTERM:\n%s", timeout, p.log())
	}
}

// kill ends the process at once (cleanup after a failure).
func (p *serveProc) kill() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// rusage is the process's resource use as its parent got it from wait4
// (valid after exit).
func (p *serveProc) rusage() *syscall.Rusage {
	if p.cmd.ProcessState == nil {
		return nil
	}
	ru, _ := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru
}

// memKB reads VmRSS and VmHWM (peak RSS) of pid from /proc, in KiB.
func memKB(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	if rss == 0 {
		return 0, 0, errors.New("bench: no VmRSS in /proc status")
	}
	return rss, hwm, nil
}

// cpuTime reads the user plus system CPU time pid has used from
// /proc/<pid>/stat (in clock ticks of 10 ms, USER_HZ on Linux).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may contain spaces; the fields follow its ")".
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, errors.New("bench: short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14 of stat
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

func mb(kb int64) float64 { return float64(kb) / 1024 }
