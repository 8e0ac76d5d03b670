package config_test

import (
	"testing"

	"github.com/opsgate/opsgate/internal/deptest"
)

// TestConfigLinksNoDriverNorMCP: validating a configuration needs neither a
// database driver (the store.url is read by internal/storeurl) nor the MCP
// client (toolset names by core/tools/toolset).
func TestConfigLinksNoDriverNorMCP(t *testing.T) {
	deptest.Check(t, ".", map[string]string{
		"github.com/jackc/pgx":        "config must not link a database driver",
		"modernc.org/sqlite":          "config must not link a database driver",
		"github.com/mark3labs/mcp-go": "config must not link the MCP client",
	})
}
