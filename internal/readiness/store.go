package readiness

import (
	"context"

	"github.com/opsgate/opsgate/core"
)

// StorePing is the check of s for Checker.Ping: the store's own Ping when
// it has one (both stores do), else a read.
func StorePing(s core.Store) func(context.Context) error {
	if p, ok := s.(interface{ Ping(context.Context) error }); ok {
		return p.Ping
	}
	return func(ctx context.Context) error {
		_, err := s.Conversations(ctx, core.ConversationFilter{Limit: 1})
		return err
	}
}
