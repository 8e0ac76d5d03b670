package memory

import (
	"os"
	"testing"

	"github.com/opsgate/opsgate/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
