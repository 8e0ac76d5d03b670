package main

import (
	"testing"

	"github.com/opsgate/opsgate/internal/deptest"
)

// TestBinaryLinksNoTesting: package testing registers its flags and pulls
// its machinery into whatever links it; the release binary must not. It
// came in once through prometheus/common v0.73's OpenMetrics parser
// (github.com/pandatix/go-abnf imports testing), hence common v0.72 in go.mod.
func TestBinaryLinksNoTesting(t *testing.T) {
	deptest.Check(t, ".", map[string]string{
		"testing": "the opsgate binary must not link package testing",
	})
}
