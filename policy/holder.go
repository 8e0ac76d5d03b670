package policy

import (
	"sync/atomic"

	"github.com/opsgate/opsgate/core"
)

// Holder is the current policy behind an atomic pointer: the engine and
// the adapters keep the *Holder (a core.Policy) and Reload swaps what it
// holds. A verdict is stored with its approval, so a decision made after a
// reload is still checked against the rule that applied when it was asked.
type Holder struct {
	cur atomic.Pointer[Policy]
}

var _ core.Policy = (*Holder)(nil)

// NewHolder holds p.
func NewHolder(p *Policy) *Holder {
	h := &Holder{}
	h.cur.Store(p)
	return h
}

// Policy is the policy held now.
func (h *Holder) Policy() *Policy { return h.cur.Load() }

// Reload loads file with the options of the policy held now and holds the
// result. On any error the policy held stays, and the error says why (the
// caller logs it: SIGHUP, "opsgate policy reload").
func (h *Holder) Reload(file string) (*Policy, error) {
	p, err := Load(file, h.Policy().opts)
	if err != nil {
		return h.Policy(), err
	}
	h.cur.Store(p)
	return p, nil
}

// Classify implements core.Policy with the policy held now.
func (h *Holder) Classify(c core.PolicyCall) core.Verdict { return h.Policy().Classify(c) }

// MayDecide implements core.Policy with the policy held now.
func (h *Holder) MayDecide(a core.Approval, who core.Actor) core.Eligibility {
	return h.Policy().MayDecide(a, who)
}

// Admins implements core.Admins with the policy held now.
func (h *Holder) Admins(convKey string) []string { return h.Policy().Admins(convKey) }

// Person implements core.Policy with the policy held now.
func (h *Holder) Person(identity string) string { return h.Policy().Person(identity) }

// RunsPerPersonPerMinute is the held policy's limit; pass the method to
// NewLimiter so that a reload changes the limit.
func (h *Holder) RunsPerPersonPerMinute() int { return h.Policy().RunsPerPersonPerMinute() }
