package postgres_test

import (
	"testing"

	"github.com/opsgate/opsgate/internal/pgtest"
	"github.com/opsgate/opsgate/memory/docs/docstest"
)

func TestImportDocuments(t *testing.T) { docstest.RunImport(t, open(t, pgtest.DB(t))) }
