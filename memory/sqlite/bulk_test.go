package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/opsgate/opsgate/memory/docs/docstest"
)

func TestImportDocuments(t *testing.T) {
	docstest.RunImport(t, open(t, filepath.Join(t.TempDir(), "opsgate.db")))
}
