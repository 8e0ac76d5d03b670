package metrics

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// Issue 22 acceptance 5: the result label of a decision is its error's
// kind's label in core's one table, for every kind, and every label is
// one the clicks counter starts with.
func TestDecideResultLabelsComeFromTheKindTable(t *testing.T) {
	if DecideResult(nil) != "ok" {
		t.Errorf("DecideResult(nil) = %q, want ok", DecideResult(nil))
	}
	for _, k := range core.Kinds() {
		got := DecideResult(fmt.Errorf("telegram: decide: %w", core.NewKindError(k, "x")))
		if got != k.Info().Label || !slices.Contains(decideResults, got) {
			t.Errorf("kind %d: label %q, want the table's %q among %v", k, got, k.Info().Label, decideResults)
		}
	}
	// The labels dashboards know keep their names.
	for err, want := range map[error]string{
		&core.NotAllowedError{Reason: "no"}: "not_allowed", core.ErrAlreadyDecided: "already_decided",
		core.ErrExpired: "expired", core.ErrNotFound: "not_found", core.ErrHashMismatch: "hash_mismatch",
		core.ErrAlreadyVoted: "already_voted", errors.New("database is locked"): "error",
	} {
		if got := DecideResult(err); got != want {
			t.Errorf("DecideResult(%v) = %q, want %q", err, got, want)
		}
	}
}
