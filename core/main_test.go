package core_test

import (
	"os"
	"testing"

	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

// TestMain lets this test binary serve the fake MCP server over stdio when
// a test starts it as a child (see mcpfake.StdioChild).
func TestMain(m *testing.M) {
	mcpfake.MaybeServeStdio()
	os.Exit(m.Run())
}
