package tools

import (
	"context"
	"fmt"
)

// ServerName is the name toolset's server gave in its serverInfo when it
// was initialized ("kubernetes-mcp-server", "secure-filesystem-server"),
// connecting first when needed. Previews recognise servers by it
// (docs/design.md §18): the toolset name is the operator's choice, the
// serverInfo name is the server's.
func (h *Host) ServerName(ctx context.Context, toolset string) (string, error) {
	u, ok := h.upstreams[toolset]
	if !ok {
		return "", fmt.Errorf("tools: unknown toolset %q", toolset)
	}
	c, err := u.get(ctx, h.dialer())
	if err != nil {
		return "", err
	}
	return c.server, nil
}

// KnownServerName is ServerName without connecting: ok is false while
// toolset's server is not connected.
func (h *Host) KnownServerName(toolset string) (name string, ok bool) {
	u, found := h.upstreams[toolset]
	if !found {
		return "", false
	}
	c, _ := u.current()
	if c == nil {
		return "", false
	}
	return c.server, true
}
