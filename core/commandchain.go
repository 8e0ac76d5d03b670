package core

import (
	"context"
	"strings"
)

// CommandChain asks each of its Commands in turn; the first that knows
// the command answers it (memory's, then the timeline's, in serve).
type CommandChain []Commands

// Command answers c with the first of cc that knows its command.
func (cc CommandChain) Command(ctx context.Context, c CommandCall) (string, bool) {
	if !strings.HasPrefix(strings.TrimSpace(c.Text), "/") {
		return "", false
	}
	for _, x := range cc {
		if reply, ok := x.Command(ctx, c); ok {
			return reply, true
		}
	}
	return "", false
}
