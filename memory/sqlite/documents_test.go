package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/opsgate/opsgate/memory/docs"
	"github.com/opsgate/opsgate/memory/docs/docstest"
)

func TestDocumentsConformance(t *testing.T) {
	docstest.Run(t, func(t *testing.T) docs.Store {
		return open(t, filepath.Join(t.TempDir(), "opsgate.db"))
	})
}
