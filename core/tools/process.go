package tools

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// process is the child process of a stdio server.
type process struct {
	stderr *tailBuffer

	mu  sync.Mutex
	cmd *exec.Cmd
}

// command builds the child for mcp-go's stdio transport, which starts it.
// It is not bound to a context: the child lives until the connection is
// closed, not until the request that happened to start it ends. Stderr
// goes to our tail buffer rather than to the transport, so that once the
// child is reaped the tail is complete and can explain a failure.
func (p *process) command(_ context.Context, command string, env, args []string) (*exec.Cmd, error) {
	cmd := exec.Command(command, args...)
	cmd.Env = append(inherited(), env...)
	cmd.Stderr = p.stderr
	// A grandchild holding stderr open must not keep Wait (and Close) waiting.
	cmd.WaitDelay = time.Second
	ownProcessGroup(cmd)
	p.mu.Lock()
	p.cmd = cmd
	p.mu.Unlock()
	return cmd, nil
}

// kill stops whatever is left of the child's process group (e.g. the node
// process an `npx` wrapper started). The transport has already stopped and
// reaped the child itself.
func (p *process) kill() {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		killProcessGroup(cmd.Process.Pid)
	}
}

// inheritedEnv names the variables of opsgate's environment that a server
// child gets besides its configured env: enough to run, find programs, use
// a proxy and its certificates, and a user's KUBECONFIG. Everything else,
// opsgate's own secrets (LLM keys, chat tokens) above all, stays out; a
// server that needs more lists it in env. This is the rule of the
// reference MCP SDKs, extended for locale, temp dirs, proxies and XDG.
var inheritedEnv = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
	"LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
	"KUBECONFIG",
	// Windows
	"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PROCESSOR_ARCHITECTURE",
	"PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE",
}

func inherited() []string {
	var env []string
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// envList renders env as KEY=VALUE in a stable order; these entries come
// after opsgate's own environment and so override it.
func envList(env map[string]string) []string {
	keys := slices.Sorted(maps.Keys(env))
	list := make([]string, 0, len(keys))
	for _, k := range keys {
		list = append(list, k+"="+env[k])
	}
	return list
}

// Sizes of the stderr tail: how much is kept, and how much goes into an
// error message.
const (
	tailKeep = 8 << 10
	tailShow = 2 << 10
)

// tailBuffer keeps the last bytes written to it. Writes never block, so a
// chatty child cannot stall on its stderr.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailKeep {
		b.buf = slices.Clone(b.buf[len(b.buf)-tailKeep:])
	}
	return len(p), nil
}

// String returns the last tailShow bytes, trimmed, as valid UTF-8.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	s := b.buf
	if len(s) > tailShow {
		s = s[len(s)-tailShow:]
	}
	out := strings.TrimSpace(strings.ToValidUTF8(string(s), ""))
	b.mu.Unlock()
	return out
}
