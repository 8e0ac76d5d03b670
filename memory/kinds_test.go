package memory_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/memory/docs"
)

// Issue 22 review finding 3: memory's errors are kinds of core's table,
// not a second vocabulary. A missing document is core's not-found (one
// not-found, matched by both sentinels); a changed proposal is a hash
// mismatch.
func TestMemoryErrorsAreKindsOfCore(t *testing.T) {
	missing := fmt.Errorf("sqlite: document d1: %w", docs.ErrNotFound)
	if !errors.Is(missing, core.ErrNotFound) || !errors.Is(missing, docs.ErrNotFound) || core.KindOf(missing) != core.KindNotFound {
		t.Errorf("a missing document (%v) is not core's not-found", missing)
	}
	if docs.ErrNotFound.Error() != "memory document not found" {
		t.Errorf("docs.ErrNotFound says %q", docs.ErrNotFound)
	}
	if got := core.KindOf(fmt.Errorf("memory: promote a.md: %w", memory.ErrChanged)); got != core.KindHashMismatch {
		t.Errorf("KindOf(ErrChanged) = %s, want hash_mismatch", got)
	}
}
