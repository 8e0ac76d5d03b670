package policy_test

import (
	"testing"

	"github.com/opsgate/opsgate/policy"
)

func TestMayStop(t *testing.T) {
	for _, tt := range []struct {
		mayTalk, approver, want bool
	}{
		{true, false, true}, // anyone who may talk where the run is
		{false, true, true}, // an approver, even where they may not talk
		{true, true, true},
		{false, false, false}, // nobody else
	} {
		if got := policy.MayStop(tt.mayTalk, tt.approver); got != tt.want {
			t.Errorf("MayStop(mayTalk %v, approver %v) = %v, want %v", tt.mayTalk, tt.approver, got, tt.want)
		}
	}
}
