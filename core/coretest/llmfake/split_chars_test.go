package llmfake

import (
	"slices"
	"testing"
)

func TestSplitChars(t *testing.T) {
	if got, want := splitChars("AKIAabcdé", 2), []string{"A", "KI", "A", "ab", "c", "dé"}; !slices.Equal(got, want) {
		t.Errorf("splitChars = %q, want %q", got, want)
	}
}
