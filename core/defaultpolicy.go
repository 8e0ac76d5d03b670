package core

import "strings"

// DefaultPolicy is the Policy without a policy file (docs/design.md §3): a read
// runs; anything else needs one approval, from the requester or one of the
// approvers configured for the conversation's platform, and nobody else. A
// schedule's run has no person to approve it: its requests go to the
// schedule's approvers instead.
type DefaultPolicy struct {
	// Approvers maps a platform ("slack", "telegram", "discord") to the
	// identities ("slack:U0BOB") that may decide requests of its
	// conversations: the adapters' approvers keys.
	Approvers map[string][]string
	// Schedules maps a schedule's name to the identities that may decide
	// the requests of its runs.
	Schedules map[string][]string
	// Place, when set, names the approver group (a key of Schedules) and
	// the platform of a conversation whose key says neither: an
	// incident's (docs/design.md §19) is decided by its target's approvers,
	// else by those of the platform it is shown on. ("", "") for others.
	Place func(convKey string) (group, platform string)
}

var _ Policy = DefaultPolicy{}

// Classify implements Policy.
func (d DefaultPolicy) Classify(c PolicyCall) Verdict {
	if !c.Risk.NeedsApproval() {
		return Verdict{Action: ActionRead}
	}
	eligible := append([]string{c.Requester.ID}, d.Fallback(c)...)
	return AskVerdict(Verdict{Quorum: 1, SelfApproval: true}, eligible, c.Requester.ID)
}

// Fallback are the identities that may decide c besides its requester when
// no policy names approvers: a schedule's approvers for its runs, else the
// approvers of the conversation's platform. Package policy builds on it.
func (d DefaultPolicy) Fallback(c PolicyCall) []string {
	if name, ok := strings.CutPrefix(c.Requester.ID, "schedule:"); ok && len(d.Schedules[name]) > 0 {
		return d.Schedules[name]
	}
	group, platform := d.placeOf(c.ConvKey)
	if group != "" && len(d.Schedules[group]) > 0 {
		return d.Schedules[group]
	}
	return d.Approvers[platform]
}

// placeOf is the approver group and platform of a conversation.
func (d DefaultPolicy) placeOf(convKey string) (group, platform string) {
	if d.Place != nil {
		if g, p := d.Place(convKey); p != "" {
			return g, p
		}
	}
	platform, _, _ = strings.Cut(convKey, ":")
	return "", platform
}

// Admins implements Admins: without a policy file, the approvers of the
// conversation's platform decide proposals (memory promotion).
func (d DefaultPolicy) Admins(convKey string) []string {
	_, platform := d.placeOf(convKey)
	return append([]string(nil), d.Approvers[platform]...)
}

// MayDecide implements Policy.
func (d DefaultPolicy) MayDecide(a Approval, who Actor) Eligibility {
	v := a.Verdict
	if v.Action == "" {
		v = d.Classify(a.PolicyCall())
	}
	return v.Decide(a.Requester, a.Requester.ID, who.ID)
}

// Person implements Policy: without a policy file every identity is its
// own person.
func (DefaultPolicy) Person(identity string) string { return identity }
