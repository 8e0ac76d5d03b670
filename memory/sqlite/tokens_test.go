package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/opsgate/opsgate/adapters/httpapi/apistoretest"
)

// What the HTTP API needs beyond core.Store: tokens, a conversation's
// runs, the pending approvals.
func TestAPIStore(t *testing.T) {
	apistoretest.Run(t, func(t *testing.T) apistoretest.Store {
		return open(t, filepath.Join(t.TempDir(), "opsgate.db"))
	})
}
