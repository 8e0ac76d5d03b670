package tools

import (
	"strconv"
	"strings"
	"sync"
)

// maxName is the longest function name OpenAI-compatible APIs accept.
const maxName = 64

// names gives model-facing tool names. A name, once given to a
// (toolset, remote name) pair, is kept for the Host's life, so a name the
// model has already seen never changes meaning when another server
// connects later.
type names struct {
	mu    sync.Mutex
	given map[toolKey]string
	taken map[string]bool
}

type toolKey struct{ toolset, remote string }

func newNames() *names {
	return &names{given: map[toolKey]string{}, taken: map[string]bool{}}
}

// assign returns the name of toolset's tool remote: the remote name made
// valid; if that is taken by another tool or reserved, prefixed with
// "<toolset>_"; failing that, prefixed with "mcp_<toolset>_" (which no
// reserved name starts with) and then numbered.
func (n *names) assign(toolset, remote string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := toolKey{toolset, remote}
	if name, ok := n.given[k]; ok {
		return name
	}
	give := func(name string) string {
		n.given[k] = name
		n.taken[name] = true
		return name
	}
	last := sanitize("mcp_" + toolset + "_" + remote)
	for _, name := range []string{sanitize(remote), sanitize(toolset + "_" + remote), last} {
		if !n.taken[name] && !reserved(name) {
			return give(name)
		}
	}
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		name := last[:min(len(last), maxName-len(suffix))] + suffix
		if !n.taken[name] {
			return give(name)
		}
	}
}

// reserved reports names of the tools the engine itself provides; a
// server's tool must never shadow them.
func reserved(name string) bool {
	return name == "load_toolset" || strings.HasPrefix(name, "memory_")
}

// sanitize maps s onto ^[a-zA-Z0-9_-]{1,64}$: other characters become '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() == maxName {
			break
		}
	}
	if b.Len() == 0 {
		return "tool"
	}
	return b.String()
}
