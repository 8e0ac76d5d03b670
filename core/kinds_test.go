package core_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// Issue 22 acceptance 5: one error-kind table. Every kind has its one
// description, an HTTP status and code, and a metric label, each label
// and code naming one kind only.
func TestEveryErrorKindHasADescriptionStatusAndLabel(t *testing.T) {
	labels, codes := map[string]core.Kind{}, map[string]core.Kind{}
	for _, k := range core.Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			info := k.Info()
			if info.Text == "" || info.Label == "" || info.Code == "" {
				t.Errorf("kind %d = %+v: want a text, a label and a code", k, info)
			}
			if http.StatusText(info.Status) == "" || info.Status < 400 {
				t.Errorf("kind %s: status %d is not an HTTP error status", k, info.Status)
			}
			if prev, ok := labels[info.Label]; ok {
				t.Errorf("label %q names %s and %s", info.Label, prev, k)
			}
			if prev, ok := codes[info.Code]; ok {
				t.Errorf("code %q names %s and %s", info.Code, prev, k)
			}
			labels[info.Label], codes[info.Code] = k, k
		})
	}
	if len(core.Kinds()) < 10 {
		t.Errorf("Kinds() = %v, want every kind", core.Kinds())
	}
	if core.Kind(200).Info() != core.KindInternal.Info() {
		t.Error("a kind outside the table is not KindInternal's row")
	}
}

// KindOf reads every error core and its neighbours return, wrapped or not,
// and an error of no kind is internal.
func TestKindOfEveryErrorOfCore(t *testing.T) {
	tests := []struct {
		err  error
		want core.Kind
	}{
		{core.ErrNotFound, core.KindNotFound},
		{core.ErrAlreadyDecided, core.KindAlreadyDecided},
		{core.ErrExpired, core.KindExpired},
		{core.ErrNotAllowed, core.KindNotAllowed},
		{&core.NotAllowedError{Reason: "Only bob may decide this request."}, core.KindNotAllowed},
		{core.ErrNoAdmins, core.KindNotAllowed},
		{core.ErrShuttingDown, core.KindShuttingDown},
		{core.ErrHashMismatch, core.KindHashMismatch},
		{core.ErrAlreadyVoted, core.KindAlreadyVoted},
		{core.ErrRateLimited, core.KindRateLimited},
		{&core.LimitError{Limit: 5}, core.KindRateLimited},
		{core.NewKindError(core.KindInvalid, "bad"), core.KindInvalid},
		{errors.New("database is locked"), core.KindInternal},
		{&core.SchemaError{Store: "sqlite", Missing: []string{"table runs"}}, core.KindInternal},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			for _, err := range []error{tt.err, fmt.Errorf("sqlite: decide: %w", tt.err)} {
				if got := core.KindOf(err); got != tt.want {
					t.Errorf("KindOf(%v) = %s, want %s", err, got, tt.want)
				}
			}
		})
	}
	// The sentinels still match as before.
	if !errors.Is(fmt.Errorf("x: %w", &core.NotAllowedError{}), core.ErrNotAllowed) || !errors.Is(&core.LimitError{}, core.ErrRateLimited) {
		t.Error("NotAllowedError or LimitError no longer matches its sentinel")
	}
}
