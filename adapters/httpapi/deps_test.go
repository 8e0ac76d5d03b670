package httpapi_test

import (
	"testing"

	"github.com/opsgate/opsgate/internal/deptest"
)

// TestHTTPAPILinksNoDriver: the API reaches the store and memory through
// its own interfaces (Store, TokenStore, MemorySearcher), so it links no
// database driver.
func TestHTTPAPILinksNoDriver(t *testing.T) {
	deptest.Check(t, ".", map[string]string{
		"github.com/jackc/pgx": "httpapi must not link a database driver",
		"modernc.org/sqlite":   "httpapi must not link a database driver",
	})
}
