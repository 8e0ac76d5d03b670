package postgres_test

import (
	"testing"

	"github.com/opsgate/opsgate/adapters/httpapi/apistoretest"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// What the HTTP API needs beyond core.Store: tokens, a conversation's
// runs, the pending approvals.
func TestAPIStore(t *testing.T) {
	apistoretest.Run(t, func(t *testing.T) apistoretest.Store { return open(t, pgtest.DB(t)) })
}
